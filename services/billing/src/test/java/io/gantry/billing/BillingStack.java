package io.gantry.billing;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.testkit.TokensFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/** What billing's integration tests run against: the shared broker and PostgreSQL, and tenants vision, nlp and an admin. */
public final class BillingStack {
    private BillingStack() {
    }

    public static Map<String, String> properties(String vision, String nlp, String admin) {
        try {
            Path tokens = TokensFile.write(TokensFile.tenants("vision", vision, "nlp", nlp), admin);
            Map<String, String> properties = new HashMap<>(EmbeddedPostgres.shared().newDatasource("billing"));
            properties.put("kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers());
            properties.put("micronaut.server.port", "-1");
            properties.put("gantry.auth.tokens-file", tokens.toString());
            // each context its own Streams application (a fresh one reads billing.usage-events from the start) and
            // its own data directory, as two billing instances would have
            properties.put("gantry.billing.streams.application-id", "gantry-billing-month-to-date-" + UUID.randomUUID());
            properties.put("gantry.billing.data-dir", Files.createTempDirectory("gantry-billing-").toString());
            return properties;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
