package io.gantry.runtime.http;

import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthResult;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@code /health} tells a caller who may not see details. */
class FailingChecksHealthAggregatorTest {

    @Test
    void theChecksThatAreNotUpAreNamedWithTheirStatusOnlyAndTheOthersLeftOut() {
        Map<String, Object> checks = new LinkedHashMap<>();
        checks.put("jdbc", HealthResult.builder("gantry-admission", HealthStatus.DOWN)
                .details(Map.of("db.internal:5432/gantry_admission", Map.of("error", "Connection refused"))).build());
        checks.put("event-loops", HealthResult.builder("gantry-admission", HealthStatus.UP).build());
        checks.put("diskSpace", HealthResult.builder("gantry-admission", HealthStatus.UNKNOWN).build());

        Map<String, Object> failing = FailingChecksHealthAggregator.failing(checks);

        assertThat(failing).containsOnlyKeys("diskSpace", "jdbc")
                .containsEntry("jdbc", Map.of("status", "DOWN"))
                .containsEntry("diskSpace", Map.of("status", "UNKNOWN"));
        assertThat(failing.toString()).doesNotContain("db.internal").doesNotContain("refused");
    }

    @Test
    void theAnswerWithoutDetailsKeepsTheStatusAndOnlyTheFailingChecksNames() {
        HealthResult detailed = HealthResult.builder("gantry-billing", HealthStatus.DOWN).details(Map.of(
                "jdbc", HealthResult.builder("gantry-billing", HealthStatus.DOWN)
                        .details(Map.of("db.internal:5432/gantry_billing", Map.of("error", "refused"))).build(),
                "billing-streams", HealthResult.builder("gantry-billing", HealthStatus.UP)
                        .details(Map.of("state", "RUNNING")).build())).build();

        HealthResult shown = FailingChecksHealthAggregator.statusOnly(detailed);

        assertThat(shown.getName()).isNull();
        assertThat(shown.getStatus()).isEqualTo(HealthStatus.DOWN);
        assertThat(shown.getDetails()).isEqualTo(Map.of("jdbc", Map.of("status", "DOWN")));
        assertThat(FailingChecksHealthAggregator.statusOnly(HealthResult.builder("gantry-billing", HealthStatus.UP)
                .details(Map.of("jdbc", HealthResult.builder("x", HealthStatus.UP).build())).build()).getDetails())
                .as("an UP answer stays the bare status").isNull();
    }

    @Test
    void nothingIsNamedWhenEveryCheckIsUp() {
        assertThat(FailingChecksHealthAggregator.failing(Map.of("jdbc",
                HealthResult.builder("gantry-admission", HealthStatus.UP).build()))).isEmpty();
        assertThat(FailingChecksHealthAggregator.failing(null)).isEmpty();
    }
}
