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
    void dependenciesAndSuspendSurviveTheWireBothWays() {
        JobSpec spec = new JobSpec("train", 0, null, List.of(new TaskSpec("w", 1, List.of("run"), 8, "H100", 1000,
                1024, null)), null, null, null, null, null, null, null, List.of(new JobSpec.Dependency("prep",
                "afterok"), new JobSpec.Dependency("clean", "afterany"), new JobSpec.Dependency("probe", "afternotok")),
                true);

        io.gantry.events.JobSpec wire = WireMapping.toAvro(spec);

        assertThat(wire.getDependencies()).extracting(d -> d.getJobId() + ":" + d.getCondition())
                .containsExactly("prep:AFTER_OK", "clean:AFTER_ANY", "probe:AFTER_NOT_OK");
        assertThat(wire.getSuspend()).isTrue();
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

    @Test
    void environmentWorkingDirectoryImageMountsAndTheSuccessPolicySurviveTheWireBothWays() {
        TaskSpec launcher = new TaskSpec("launcher", 1, List.of("mpirun", "train"), 0, null, 1000, 1024, null)
                .withRuntime(java.util.Map.of("OMP_NUM_THREADS", "4", "EMPTY", ""), "/workspace",
                        "nvcr.io/nvidia/pytorch:24.05-py3", List.of(new TaskSpec.Mount("/data", null, "datasets", true),
                                new TaskSpec.Mount("/scratch", "/mnt/nvme", null, false)));
        TaskSpec worker = new TaskSpec("worker", 2, List.of("sleep", "infinity"), 8, "H100", 1000, 1024, null);
        JobSpec spec = new JobSpec("mpi", 0, null, List.of(launcher, worker), null, null, null, null, null,
                new JobSpec.SuccessPolicy("launcher"));

        io.gantry.events.JobSpec wire = WireMapping.toAvro(spec);

        assertThat(wire.getSuccessPolicy().getLeader()).isEqualTo("launcher");
        assertThat(wire.getTasks().get(0).getEnv()).containsEntry("OMP_NUM_THREADS", "4").containsEntry("EMPTY", "");
        assertThat(wire.getTasks().get(0).getWorkingDir()).isEqualTo("/workspace");
        assertThat(wire.getTasks().get(0).getImage()).isEqualTo("nvcr.io/nvidia/pytorch:24.05-py3");
        assertThat(wire.getTasks().get(0).getMounts()).hasSize(2);
        assertThat(wire.getTasks().get(1).getEnv()).isEmpty();
        assertThat(wire.getTasks().get(1).getMounts()).isEmpty();
        assertThat(WireMapping.fromAvro(wire)).isEqualTo(spec);
    }
}
