package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A tiny HTTP client for the tests: JSON in, status + JSON out, one bearer token. */
final class Api {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** @param servedBy the instance that answered, when a standby forwarded the request ({@code Gantry-Served-By}) */
    record Response(int status, String contentType, JsonNode body, String servedBy) {
        Response(int status, String contentType, JsonNode body) {
            this(status, contentType, body, null);
        }

        String text(String field) {
            JsonNode n = body.path(field);
            return n.isMissingNode() || n.isNull() ? null : n.asText();
        }
    }

    private final String base;
    private final String token;

    Api(String base, String token) {
        this.base = base;
        this.token = token;
    }

    Response get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    Response post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    /** A POST with extra headers, e.g. {@code Idempotency-Key}. */
    Response post(String path, String json, java.util.Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        headers.forEach(b::header);
        return send(b);
    }

    /** A PUT of a body in any media type, e.g. a YAML configuration. */
    Response put(String path, String body, String contentType) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", contentType)
                .PUT(HttpRequest.BodyPublishers.ofString(body)));
    }

    Response delete(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
    }

    private Response send(HttpRequest.Builder b) {
        try {
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            HttpResponse<String> r = HTTP.send(b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = r.body() == null || r.body().isBlank() ? JSON.nullNode() : JSON.readTree(r.body());
            return new Response(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), body,
                    r.headers().firstValue("Gantry-Served-By").orElse(null));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Every job this caller may see (all tenants' for an admin), by id, following the list's cursors. */
    java.util.Map<String, JsonNode> allJobs() {
        java.util.Map<String, JsonNode> jobs = new java.util.HashMap<>();
        String cursor = null;
        do {
            Response page = get("/v1/jobs?limit=1000" + (cursor == null ? "" : "&cursor=" + cursor));
            page.body().path("jobs").forEach(j -> jobs.put(j.path("jobId").asText(), j));
            cursor = page.text("nextCursor");
            if (cursor != null) {
                cursor = java.net.URLEncoder.encode(cursor, java.nio.charset.StandardCharsets.UTF_8);
            }
        } while (cursor != null);
        return jobs;
    }
}
