package io.gantry.cli.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.gantry.cli.CliConfig;
import io.gantry.cli.CliException;
import io.gantry.cli.ExitCode;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * Gantry's REST API as the CLI uses it: JSON in and out, one bearer token, and every refusal turned into the
 * sentence the API wrote ({@link ApiError}). The token goes only into the Authorization header.
 */
public final class ApiClient {
    public static final ObjectMapper JSON = new ObjectMapper();

    /** The services the CLI talks to, each on its own base URL. */
    public enum Service { ADMISSION, QUEUE, PLACEMENT, BILLING }

    private final CliConfig config;
    private final HttpClient http;

    public ApiClient(CliConfig config) {
        this.config = config;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    public JsonNode get(Service service, String path) {
        return send(service, HttpRequest.newBuilder(uri(service, path)).GET(), path);
    }

    public JsonNode post(Service service, String path, String json, Map<String, String> headers) {
        return postForAnswer(service, path, json, headers).body();
    }

    /** An answer's body and the response headers that came with it. */
    public record Answer(JsonNode body, java.net.http.HttpHeaders headers) {
    }

    /** A POST whose response headers the caller reads too (e.g. admission's budget warnings). */
    public Answer postForAnswer(Service service, String path, String json, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(service, path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
        headers.forEach(b::header);
        HttpResponse<String> r = exchange(service, b, path, "application/json");
        return new Answer(parse(r.body()), r.headers());
    }

    public JsonNode delete(Service service, String path) {
        return send(service, HttpRequest.newBuilder(uri(service, path)).DELETE(), path);
    }

    /** PUT of a document as it is (e.g. a YAML file), with its media type. */
    public JsonNode put(Service service, String path, byte[] body, String contentType) {
        return send(service, HttpRequest.newBuilder(uri(service, path)).header("Content-Type", contentType)
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)), path);
    }

    /** GET of a document that is not JSON (e.g. {@code application/yaml}): its text as the API wrote it. */
    public String getText(Service service, String path, String accept) {
        return exchange(service, HttpRequest.newBuilder(uri(service, path)).GET(), path, accept).body();
    }

    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    public URI base(Service service) {
        return switch (service) {
            case ADMISSION -> config.api();
            case QUEUE -> config.queueApi();
            case PLACEMENT -> config.placementApi();
            case BILLING -> config.billingApi();
        };
    }

    private URI uri(Service service, String path) {
        return URI.create(base(service) + path);
    }

    private JsonNode send(Service service, HttpRequest.Builder b, String path) {
        return parse(exchange(service, b, path, "application/json").body());
    }

    /** Sends with the token; answers a 2xx response, throws the API's refusal as an {@link ApiError}. */
    private HttpResponse<String> exchange(Service service, HttpRequest.Builder b, String path, String accept) {
        if (config.token() == null) {
            throw new CliException(ExitCode.AUTH, "no API token: run `gantry login` (or set GANTRY_TOKEN); "
                    + "looked in " + config.file() + " and the dev installation's tokens.yml");
        }
        b.header("Authorization", "Bearer " + config.token()).header("Accept", accept)
                .timeout(Duration.ofSeconds(30));
        HttpResponse<String> r;
        try {
            r = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new CliException(ExitCode.UNAVAILABLE, "cannot reach Gantry's " + name(service) + " at "
                    + base(service) + " (is it running? `./gantry dev` starts one; `gantry login --api URL` points "
                    + "the CLI elsewhere)");
        } catch (HttpTimeoutException e) {
            throw new CliException(ExitCode.UNAVAILABLE, "Gantry's " + name(service) + " at " + base(service)
                    + " did not answer " + path + " within 30 s; retry");
        } catch (IOException e) {
            throw new CliException(ExitCode.UNAVAILABLE, "talking to Gantry's " + name(service) + " at "
                    + base(service) + " failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCode.ERROR, "interrupted");
        }
        if (r.statusCode() >= 200 && r.statusCode() < 300) {
            return r;
        }
        JsonNode body = parse(r.body());
        if (!body.isObject()) {
            // every refusal of Gantry's API is a problem+json object: this server is something else (a wrong --api,
            // a proxy's error page)
            String type = r.headers().firstValue("Content-Type").orElse("no content type");
            throw new CliException(ExitCode.UNAVAILABLE, "the server at " + base(service) + " answered " + path
                    + " with HTTP " + r.statusCode() + " (" + type + "), not as Gantry's " + name(service)
                    + " does: is the API URL right (`--api`, GANTRY_API, `gantry login`)?");
        }
        String hint = r.statusCode() == 401 ? "(token from " + config.tokenSource() + "; `gantry login` stores "
                + "another)" : null;
        throw ApiError.of(r.statusCode(), body, r.body(), hint);
    }

    private static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            return MissingNode.getInstance();
        }
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            return MissingNode.getInstance();
        }
    }

    private static String name(Service s) {
        return switch (s) {
            case ADMISSION -> "API (admission)";
            case QUEUE -> "queue service";
            case PLACEMENT -> "placement service";
            case BILLING -> "billing service";
        };
    }
}
