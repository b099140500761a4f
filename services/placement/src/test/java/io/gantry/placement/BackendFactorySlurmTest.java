package io.gantry.placement;

import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.backend.slurm.SlurmConfig;
import io.gantry.placement.backend.slurm.SlurmSettings;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code gantry.placement.backend: slurm}: its keys are read and checked, and an unreachable controller stops the start. */
class BackendFactorySlurmTest {

    private static Environment environment(Map<String, Object> properties) {
        Environment env = ApplicationContext.builder().properties(properties).build().getEnvironment();
        env.start();
        return env;
    }

    @Test
    void theSlurmKeysAreReadWithTheirDefaults() {
        SlurmConfig defaults = SlurmSettings.config(environment(Map.of()));
        assertThat(defaults.partition()).isEqualTo("gantry");
        assertThat(defaults.pollInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(defaults.graceSeconds()).isEqualTo(10);
        assertThat(defaults.modelOf("h100")).isEqualTo("H100");

        SlurmConfig set = SlurmSettings.config(environment(Map.of("gantry.placement.slurm.partition", "gpu-gantry",
                "gantry.placement.slurm.account", "ml", "gantry.placement.slurm.poll-interval", "500ms",
                "gantry.placement.slurm.gpu-models.a100", "A100-80GB", "gantry.placement.slurm.work-dir", "/shared/jobs",
                "gantry.placement.slurm.exact-gpu-indices", "false")));
        assertThat(set.partition()).isEqualTo("gpu-gantry");
        assertThat(set.account()).isEqualTo("ml");
        assertThat(set.pollInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(set.modelOf("a100")).isEqualTo("A100-80GB");
        assertThat(set.workDir()).isEqualTo(Path.of("/shared/jobs"));
        assertThat(set.exactGpuIndices()).isFalse();
    }

    @Test
    void aBadSlurmValueIsRefusedAtStartNamingItsKey() {
        BackendFactory factory = factory(Map.of("gantry.placement.slurm.grace-seconds", "-1"));
        assertThatThrownBy(() -> backend(factory)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.slurm.grace-seconds must be >= 0, was -1");
        BackendFactory notBool = factory(Map.of("gantry.placement.slurm.exact-gpu-indices", "yes"));
        assertThatThrownBy(() -> backend(notBool)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.slurm.exact-gpu-indices must be true or false, was `yes`");
    }

    @Test
    void aControllerThatDoesNotAnswerStopsTheStartWithTheReason() {
        BackendFactory factory = factory(Map.of("gantry.placement.slurm.commands.scontrol", "/bin/false",
                "gantry.placement.slurm.startup-timeout", "0s"));
        assertThatThrownBy(() -> backend(factory)).isInstanceOf(ConfigurationException.class)
                .hasMessage("gantry.placement.backend=slurm: the Slurm controller did not answer within 0 s: "
                        + "scontrol exited with 1: ");
    }

    private static BackendFactory factory(Map<String, Object> properties) {
        Map<String, Object> all = new HashMap<>(properties);
        all.put("gantry.placement.backend", "slurm");
        BackendFactory factory = new BackendFactory();
        ENVIRONMENTS.put(factory, environment(all));
        return factory;
    }

    private static final Map<BackendFactory, io.micronaut.context.env.Environment> ENVIRONMENTS =
            new java.util.IdentityHashMap<>();

    private static Object backend(BackendFactory factory) throws Exception {
        return BackendFactory.backend("slurm", new VirtualClock(Clock.systemUTC(), 1.0), ENVIRONMENTS.get(factory));
    }
}
