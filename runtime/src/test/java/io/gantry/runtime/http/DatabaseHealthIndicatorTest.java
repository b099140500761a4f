package io.gantry.runtime.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.testkit.LogCapture;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthResult;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code jdbc} check against a real PostgreSQL and a port where none listens: DOWN while a data source cannot hand
 * out a connection, with the driver's words, and one log line when that starts and one when it ends — not an ERROR
 * with a stack on every call, as Micronaut's own indicator logs.
 */
class DatabaseHealthIndicatorTest {
    private static final String LOGGER = DatabaseHealthIndicator.class.getName();

    @Test
    void aDataSourceThatStopsServingIsOneWarningLineAndOneWhenItServesAgainNotALinePerCheck() throws Exception {
        EmbeddedPostgres pg = EmbeddedPostgres.shared();
        String serving = pg.ensureDatabase("health_indicator");
        PGSimpleDataSource flaky = dataSource(serving);
        PGSimpleDataSource fine = dataSource(serving);
        DatabaseHealthIndicator indicator = new DatabaseHealthIndicator(ForkJoinPool.commonPool(), List.of(
                new DatabaseHealthIndicator.Source("default", fine), new DatabaseHealthIndicator.Source("reports", flaky)));

        try (LogCapture log = LogCapture.start()) {
            assertThat(indicator.check().getStatus()).isEqualTo(HealthStatus.UP);

            flaky.setURL("jdbc:postgresql://127.0.0.1:" + closedPort() + "/health_indicator");
            for (int i = 0; i < 3; i++) {
                HealthResult down = indicator.check();
                assertThat(down.getName()).isEqualTo("jdbc");
                assertThat(down.getStatus()).isEqualTo(HealthStatus.DOWN);
                @SuppressWarnings("unchecked")
                Map<String, Map<String, String>> details = (Map<String, Map<String, String>>) down.getDetails();
                assertThat(details.get("default")).containsEntry("status", "UP");
                assertThat(details.get("reports")).containsEntry("status", "DOWN");
                assertThat(details.get("reports").get("error")).contains("SQLSTATE 08001");
            }
            List<ILoggingEvent> lines = ours(log);
            assertThat(lines).as("one line for the outage, not one per check").hasSize(1);
            assertThat(lines.get(0).getLevel()).isEqualTo(Level.WARN);
            assertThat(lines.get(0).getThrowableProxy()).as("a stack").isNull();
            assertThat(lines.get(0).getFormattedMessage()).contains("data source reports is unavailable")
                    .contains("SQLSTATE 08001").doesNotContain("\n");

            flaky.setURL(serving);
            assertThat(indicator.check().getStatus()).isEqualTo(HealthStatus.UP);
            assertThat(indicator.check().getStatus()).isEqualTo(HealthStatus.UP);
            lines = ours(log);
            assertThat(lines).hasSize(2);
            assertThat(lines.get(1).getLevel()).isEqualTo(Level.INFO);
            assertThat(lines.get(1).getFormattedMessage()).contains("data source reports serves again");
            assertThat(log.events()).extracting(ILoggingEvent::getLevel).doesNotContain(Level.ERROR);
        }
    }

    private static List<ILoggingEvent> ours(LogCapture log) {
        return log.events().stream().filter(e -> e.getLoggerName().equals(LOGGER)).toList();
    }

    private static PGSimpleDataSource dataSource(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url);
        ds.setUser(EmbeddedPostgres.shared().user());
        ds.setPassword(EmbeddedPostgres.shared().password());
        ds.setConnectTimeout(2);
        ds.setSocketTimeout(5);
        return ds;
    }

    /** A loopback port nothing listens on (it was free a moment ago): a connection there is refused at once. */
    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
