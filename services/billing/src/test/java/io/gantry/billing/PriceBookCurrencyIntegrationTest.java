package io.gantry.billing;

import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.testkit.InstanceHttp;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.TokensFile;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Before any price book is applied (version 0) billing speaks the operator's configured currency. */
class PriceBookCurrencyIntegrationTest {
    private static final String TOKEN = "currency-vision-token-1";
    private static final InstanceHttp INSTANCE = new InstanceHttp("1");
    private static EmbeddedKafka broker;
    private static Path tokens;

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        KafkaTopics.ensureAll(broker.bootstrapServers(), 1);
        tokens = TokensFile.write(TokensFile.tenants("vision", TOKEN), null);
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static Map<String, Object> properties(String currency) throws Exception {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), INSTANCE.port("1"), tokens, "1");
        props.putAll(EmbeddedPostgres.shared().newDatasource("billing"));
        props.put("gantry.billing.data-dir", Files.createTempDirectory("gantry-billing-currency-").toString());
        props.put("gantry.billing.currency", currency);
        return props;
    }

    @Test
    void versionZeroIsInTheConfiguredCurrency() throws Exception {
        try (ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, properties(" usd"))
                .getApplicationContext()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> ctx.getBean(BillingProcessor.class).isReady());
            HttpResponse<String> book = INSTANCE.get("1", "/v1/price-book", TOKEN);
            assertThat(book.statusCode()).as(book.body()).isEqualTo(200);
            assertThat(book.body()).contains("\"version\":0").contains("\"currency\":\"USD\"");
            HttpResponse<String> costs = INSTANCE.get("1", "/v1/costs?month=2026-11", TOKEN);
            assertThat(costs.body()).contains("\"currency\":\"USD\"");
        }
    }

    @Test
    void aCodeThatIsNoCurrencyStopsTheServiceNamingTheSetting() {
        assertThatThrownBy(() -> ApplicationContext.run(EmbeddedServer.class, properties("euros")))
                .hasStackTraceContaining("gantry.billing.currency must be an ISO 4217 currency code")
                .hasStackTraceContaining("'euros'");
    }
}
