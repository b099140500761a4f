package io.gantry.runtime.http;

import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthResult;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class EventLoopHealthIndicatorTest {
    @Test
    void isDownWhileAnyLoopHasStoppedNamingItsError() {
        Map<String, Throwable> loops = new LinkedHashMap<>();
        loops.put("placement/pool-a", null);
        loops.put("placement/pool-b", null);
        assertThat(EventLoopHealthIndicator.result(loops).getStatus()).isEqualTo(HealthStatus.UP);

        loops.put("placement/pool-b", new NoSuchMethodError("io.gantry.Old.gone()"));
        HealthResult down = EventLoopHealthIndicator.result(loops);
        assertThat(down.getStatus()).isEqualTo(HealthStatus.DOWN);
        @SuppressWarnings("unchecked")
        Map<String, Object> details = (Map<String, Object>) down.getDetails();
        assertThat(details).containsEntry("placement/pool-a", "running");
        assertThat(details.get("placement/pool-b").toString()).contains("io.gantry.Old.gone()");
    }
}
