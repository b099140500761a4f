package io.gantry.admission.kafka;

import io.gantry.admission.core.JobSpec;
import io.gantry.admission.core.TaskSpec;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class WireMappingTest {

    @Test
    void gpuFractionsAndMigProfilesSurviveTheWireBothWays() {
        JobSpec spec = new JobSpec("infer", 0, null, List.of(
                new TaskSpec("half", 2, List.of("serve"), 0, "H100", 1000, 1024, null, List.of(), null, 500, 20_480L, null),
                new TaskSpec("mig", 1, List.of("serve"), 0, null, 1000, 1024, null, List.of(), null, null, null, "1g.10gb")));

        io.gantry.events.JobSpec wire = WireMapping.toAvro(spec);

        assertThat(wire.getTasks().get(0).getGpuMilli()).isEqualTo(500);
        assertThat(wire.getTasks().get(0).getGpuMemoryMiB()).isEqualTo(20_480L);
        assertThat(wire.getTasks().get(1).getMigProfile()).isEqualTo("1g.10gb");
        assertThat(WireMapping.fromAvro(wire)).isEqualTo(spec);
    }

    @Test
    void thePlacementPolicyIsCarriedOnTheWireBothWays() {
        JobSpec spec = new JobSpec("train", 0, null, List.of(new TaskSpec("w", 1, List.of("run"), 8, "H100", 1000,
                1024, null)), null, null, null, "spread");

        io.gantry.events.JobSpec wire = WireMapping.toAvro(spec);

        assertThat(wire.getPlacementPolicy()).isEqualTo("spread");
        assertThat(WireMapping.fromAvro(wire)).isEqualTo(spec);
        assertThat(WireMapping.fromAvro(WireMapping.toAvro(new JobSpec("t", 0, null, spec.tasks())))
                .placementPolicy()).isNull();
    }
}
