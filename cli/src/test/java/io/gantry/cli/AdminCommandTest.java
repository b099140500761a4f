package io.gantry.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gantry admin} against a stand-in for the API on loopback: which request each command sends, and what it
 * prints of the answer. (The API itself is tested in admission's AccessIntegrationTest.)
 */
class AdminCommandTest {
    @TempDir
    Path home;

    HttpServer server;
    final List<String> requests = new ArrayList<>();
    final Map<String, String> answers = new ConcurrentHashMap<>();
    final Map<String, Integer> statuses = new ConcurrentHashMap<>();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String line = exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + exchange.getRequestHeaders().getFirst("Content-Type") + " "
                    + exchange.getRequestHeaders().getFirst("Accept") + " " + body;
            synchronized (requests) {
                requests.add(line.trim());
            }
            String key = exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath();
            byte[] answer = answers.getOrDefault(key, "{}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(statuses.getOrDefault(key, 200), answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    CliRunner cli() throws IOException {
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        Path config = Files.writeString(home.resolve("config.yaml"), "api: " + url + "\nqueue-api: " + url + "\n");
        return new CliRunner(home, home.resolve("repo")).env("GANTRY_CONFIG", config.toString())
                .env("GANTRY_TOKEN", "admin-token-123");
    }

    @Test
    void issuingATokenSendsItsOptionsAndPrintsTheTokenOnceWithAWarning() throws IOException {
        answers.put("POST /v1/admin/tenants/acme/tokens", """
                {"tokenId":"tok_0123456789abcdef01234567","tenant":"acme","role":"admin","label":"ci",
                 "expiresAt":"2026-04-01T00:00:00Z","token":"gtn_SECRET"}""");

        CliRunner.Result r = cli().run("admin", "tokens", "issue", "acme", "--role", "admin", "--expires-in", "30d",
                "--label", "ci");

        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(requests).containsExactly("POST /v1/admin/tenants/acme/tokens application/json application/json "
                + "{\"role\":\"admin\",\"expiresIn\":\"PT720H\",\"label\":\"ci\"}");
        assertThat(r.out()).isEqualTo("tok_0123456789abcdef01234567 issued for tenant acme (admin, expires "
                + "2026-04-01T00:00:00Z)\ngtn_SECRET\n");
        assertThat(r.err()).contains("store this token now: it is shown only this once").doesNotContain("gtn_");
    }

    @Test
    void tenantsAreCreatedListedDisabledAndEnabled() throws IOException {
        answers.put("GET /v1/admin/tenants", """
                {"tenants":[{"name":"acme","displayName":"Acme","state":"ACTIVE","createdAt":"2026-03-01T00:00:00Z"},
                            {"name":"demo","displayName":"demo","state":"ACTIVE","source":"tokens-file"}]}""");
        answers.put("POST /v1/admin/tenants/acme/disable", "{\"name\":\"acme\",\"state\":\"DISABLED\"}");
        answers.put("POST /v1/admin/tenants", "{\"name\":\"acme\",\"state\":\"ACTIVE\"}");

        assertThat(cli().run("admin", "tenants", "create", "acme", "--display-name", "Acme").out())
                .startsWith("tenant acme created (active)");
        CliRunner.Result list = cli().run("admin", "tenants", "list");
        assertThat(list.out()).contains("TENANT", "acme", "ACTIVE", "Acme", "2026-03-01T00:00:00Z");
        assertThat(list.out().lines().filter(l -> l.startsWith("demo"))).singleElement().asString()
                .contains("ACTIVE", "(tokens file)").doesNotContain("null");
        assertThat(cli().run("admin", "tenants", "disable", "acme").out()).isEqualTo("tenant acme is disabled\n");
        assertThat(requests).containsExactly(
                "POST /v1/admin/tenants application/json application/json {\"name\":\"acme\",\"displayName\":\"Acme\"}",
                "GET /v1/admin/tenants null application/json",
                "POST /v1/admin/tenants/acme/disable application/json application/json {}");
    }

    @Test
    void aRotationPassesItsOverlapAndSaysUntilWhenTheOldTokenWorks() throws IOException {
        answers.put("POST /v1/admin/tokens/tok_0123456789abcdef01234567/rotate", """
                {"tokenId":"tok_ffffffffffffffffffffffff","tenant":"acme","role":"tenant","token":"gtn_NEW",
                 "expiresAt":"2026-06-01T00:00:00Z",
                 "replaced":{"tokenId":"tok_0123456789abcdef01234567","expiresAt":"2026-03-01T13:00:00Z"}}""");

        CliRunner.Result r = cli().run("admin", "tokens", "rotate", "tok_0123456789abcdef01234567", "--overlap", "1h");

        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(requests.get(0)).startsWith("POST /v1/admin/tokens/tok_0123456789abcdef01234567/rotate?overlap=PT1H");
        assertThat(r.out()).contains("gtn_NEW", "tok_0123456789abcdef01234567 keeps working until 2026-03-01T13:00:00Z");
    }

    @Test
    void aTenantTokenIsRefusedWithTheApisSentenceAndExit3() throws IOException {
        answers.put("GET /v1/admin/tenants/acme/tokens", """
                {"type":"about:blank","title":"Forbidden","status":403,"detail":"only admins manage tenants and tokens"}""");
        statuses.put("GET /v1/admin/tenants/acme/tokens", 403);

        CliRunner.Result r = cli().run("admin", "tokens", "list", "acme");

        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.AUTH);
        assertThat(r.err()).contains("only admins manage tenants and tokens");
    }

    @Test
    void theQueueConfigurationIsReadAsYamlAndReplacedFromAFile() throws IOException {
        Path file = Files.writeString(home.resolve("queues.yaml"), "queues:\n  - name: acme\n    tenant: acme\n");
        answers.put("PUT /v1/admin/queue-config", "{\"version\":7,\"source\":\"admin\"}");

        CliRunner.Result put = cli().run("admin", "queue-config", "put", file.toString(), "--force");
        cli().run("admin", "queue-config", "get");

        assertThat(put.out()).isEqualTo("queue configuration version 7 applied\n");
        assertThat(requests).containsExactly(
                "PUT /v1/admin/queue-config?force=true application/yaml application/json queues:\n  - name: acme\n"
                        + "    tenant: acme",
                "GET /v1/admin/queue-config null application/yaml");
    }
}
