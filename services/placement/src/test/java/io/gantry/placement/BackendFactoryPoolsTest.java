package io.gantry.placement;

import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.kafka.PlacementProcessor;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pools placement starts with, from its configuration. */
class BackendFactoryPoolsTest {
    private static Environment environment(Map<String, Object> properties) {
        Environment env = ApplicationContext.builder().properties(properties).build().getEnvironment();
        env.start();
        return env;
    }

    private static PlacementProcessor.Configured pools(Map<String, Object> properties) throws Exception {
        return new BackendFactory().pools(environment(properties), new VirtualClock(Clock.systemUTC(), 1.0));
    }

    @Test
    void withoutPoolsThereIsOnePoolDefaultOfTheConfiguredBackend() throws Exception {
        PlacementProcessor.Configured configured = pools(Map.of());

        assertThat(configured.pools()).singleElement().satisfies(p -> {
            assertThat(p.name()).isEqualTo("default");
            assertThat(p.backend().name()).isEqualTo("simulated");
            assertThat(p.backend().nodes()).hasSize(4);
        });
    }

    @Test
    void eachPoolReadsItsOwnKeysFallingBackToTheSharedOnes() throws Exception {
        PlacementProcessor.Configured configured = pools(Map.of(
                "gantry.placement.pools.a.backend", "simulated",
                "gantry.placement.pools.b.backend", "simulated",
                "gantry.placement.pools.b.simulated.cluster-file", "src/test/resources/pools-b.yaml",
                "gantry.placement.policy", "spread",
                "gantry.placement.pools.b.policy", "binpack"));

        assertThat(configured.pools()).extracting(PlacementProcessor.Pool::name).containsExactly("a", "b");
        assertThat(configured.pools().get(0).backend().nodes()).hasSize(4);
        assertThat(configured.pools().get(1).backend().nodes()).extracting(n -> n.nodeId()).containsExactly("b-0");
        assertThat(configured.pools().get(0).placer().toString()).containsIgnoringCase("spread");
        assertThat(configured.pools().get(1).placer().toString()).containsIgnoringCase("binpack");
    }

    @Test
    void aNodeIdListedByTwoPoolsRefusesTheStart() {
        assertThatThrownBy(() -> pools(Map.of("gantry.placement.pools.k8s.backend", "simulated",
                "gantry.placement.pools.slurm.backend", "simulated")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.pools: node sim-0 is in pools k8s and slurm: node ids must be "
                        + "unique across pools");
    }

    @Test
    void aPoolWithoutABackendOrWithABadNameRefusesTheStart() {
        assertThatThrownBy(() -> pools(Map.of("gantry.placement.pools.a.policy", "spread")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.pools.a.backend is missing");
        String longName = "abcdefghijklmnopqrstuvwxyz0123456"; // 33 (Micronaut lower-cases keys itself)
        assertThatThrownBy(() -> pools(Map.of("gantry.placement.pools." + longName + ".backend", "simulated")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("pool name `" + longName + "` must be 1-32 characters of a-z, 0-9 and -");
    }
}
