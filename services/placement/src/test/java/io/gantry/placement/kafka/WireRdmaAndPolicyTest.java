package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeRegistered;
import io.gantry.events.TaskSpec;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacementFact;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.RdmaNic;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The new wire fields map both ways: NICs and control labels on registrations, NICs on placements, the policy. */
class WireRdmaAndPolicyTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    @Test
    void aRegistrationKeepsItsNicsAndControlLabelsOnTheWire() {
        NodeSpec node = new NodeSpec("n1", "simulated", List.of(new Gpu(0, "H100", 81_920)), 1000, 1024,
                Map.of("rack", "r1", NodeSpec.CORDONED_LABEL, "true"), List.of(), List.of(new RdmaNic("mlx5_0", 0, 0, 400)));

        NodeRegistered wire = (NodeRegistered) WireMapping.nodeRegistered(node, T0).getPayload();

        assertThat(wire.getRdmaNics()).singleElement().satisfies(n -> {
            assertThat(n.getName()).isEqualTo("mlx5_0");
            assertThat(n.getGbps()).isEqualTo(400);
        });
        assertThat(WireMapping.node("n1", wire)).isEqualTo(node);
        assertThat(WireMapping.node("n1", wire).cordoned()).isTrue();
    }

    @Test
    void aRegistrationSaysWhichMigProfilesEachGpuCanHost() {
        NodeSpec node = new NodeSpec("n1", "simulated", List.of(new Gpu(0, "A100", 40_960, 0, 0, 0, true),
                new Gpu(1, "A100", 40_960, 0, 0, 0, false)), 1000, 1024, Map.of());

        NodeRegistered wire = (NodeRegistered) WireMapping.nodeRegistered(node,
                io.gantry.placement.core.MigProfiles.standard(), T0).getPayload();

        assertThat(wire.getGpus().get(0).getMigProfiles()).as("an A100 of 40 GB").containsExactly("1g.5gb", "1g.10gb",
                "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
        assertThat(wire.getGpus().get(1).getMigProfiles()).as("not MIG-capable").isEmpty();
    }

    @Test
    void aPlacementCarriesItsNicsAndAReadBackGrantHasThem() {
        PlacedTask p = new PlacedTask("w", 0, "n1", "H100", List.of(0), 1000, 1024, List.of(), 60L, List.of(),
                List.of("mlx5_0"));
        Allocation a = new Allocation("a1", "j", "vision", 1, List.of(p), T0, "simulated");

        AllocationEvent e = WireMapping.allocationEvent(new PlacementFact.AllocationGranted(a), T0);

        assertThat(((AllocationGranted) e.getPayload()).getPlacements().get(0).getRdmaNics()).containsExactly("mlx5_0");
        assertThat(((PlacementFact.AllocationGranted) WireMapping.fact(e)).allocation()).isEqualTo(a);
    }

    private static JobDispatched dispatched(String policy) {
        return JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(1)
                .setSpec(JobSpec.newBuilder().setName("t").setPriority(0).setPlacementPolicy(policy)
                        .setTasks(List.of(TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("x"))
                                .setGpus(1).setCpuMillis(1000).setMemoryMiB(1024).build())).build()).build();
    }

    @Test
    void theJobsPlacementPolicyReachesTheGangAndAnUnknownOneIsRefused() {
        assertThat(WireMapping.gang("j", dispatched("spread")).policy()).isEqualTo(PlacementPolicy.SPREAD);
        assertThat(WireMapping.gang("j", dispatched("binpack")).policy()).isEqualTo(PlacementPolicy.BINPACK);
        assertThat(WireMapping.gang("j", dispatched(null)).policy()).isNull();
        assertThatThrownBy(() -> WireMapping.gang("j", dispatched("random")))
                .hasMessage("spec.placementPolicy must be binpack or spread, was random");
    }
}
