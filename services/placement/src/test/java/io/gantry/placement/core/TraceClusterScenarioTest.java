package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Scenarios on real clusters: the Lingjun Clos (847 hosts, 119 racks, 3 spines) and the Alibaba openb inventory
 * (1,523 nodes, 0-8 GPUs of 7 models). The traces live beside the repository ({@code ../shared/traces}); without
 * them the tests are skipped, saying so.
 */
class TraceClusterScenarioTest {
    static final Path TRACES = Path.of("../../../shared/traces");

    static List<String> trace(String file) throws IOException {
        Path p = TRACES.resolve(file);
        assumeTrue(Files.isReadable(p), "trace " + p.toAbsolutePath().normalize()
                + " is not there (the shared/ checkout must sit beside the repository)");
        return Files.readAllLines(p);
    }

    static List<NodeSpec> lingjun() throws IOException {
        return TraceClusters.lingjun(trace("lingjun-topology/topo.csv"), "simulated", "H100");
    }

    static List<NodeSpec> openb() throws IOException {
        return TraceClusters.alibabaOpenb(trace("alibaba-openb/openb_node_list_all_node.csv"), "simulated");
    }

    static ClusterState cluster(List<NodeSpec> nodes, PlacementPolicy policy) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer(policy, Map.of()));
        nodes.forEach(n -> state.register(n).forEach(state::replay));
        return state;
    }

    @Test
    void theLingjunClosLoadsAs847EightGpuHostsIn120RacksUnder3Spines() throws IOException {
        List<NodeSpec> nodes = lingjun();
        assertThat(nodes).hasSize(847);
        assertThat(nodes.stream().map(NodeSpec::spine).collect(Collectors.toSet())).containsExactlyInAnyOrder("P8", "P10", "P12");
        assertThat(nodes.stream().map(n -> n.spine() + "/" + n.rack()).collect(Collectors.toSet())).hasSize(119); // 119 (PSW, ASW) pairs
        assertThat(cluster(nodes, PlacementPolicy.BINPACK).inventory().eligibleGpus()).isEqualTo(847 * 8);
    }

    @Test
    void theOpenbInventoryLoadsWithItsModelsAndGpuCounts() throws IOException {
        List<NodeSpec> nodes = openb();
        assertThat(nodes).hasSize(1523);
        assertThat(nodes.stream().mapToInt(NodeSpec::gpuCount).sum()).isEqualTo(6212);
        assertThat(nodes.stream().flatMap(n -> n.gpus().stream()).map(Gpu::model).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder("P100", "V100M16", "V100M32", "T4", "A10", "G2", "G3");
        assertThat(nodes.stream().mapToInt(NodeSpec::gpuCount).max().orElseThrow()).isEqualTo(8);
    }

    /**
     * A generated stream on the Lingjun Clos: gangs of 8-64 GPUs (as 8-GPU tasks) and 1-4 GPU jobs, with releases;
     * at least 99% of the gangs no larger than a rack land under one ToR whenever some rack had that much free.
     */
    @Test
    void atLeast99PercentOfRackSizedGangsLandUnderOneTorWhenARackHasRoom() throws IOException {
        List<NodeSpec> nodes = lingjun();
        Map<String, String> rackOf = nodes.stream().collect(Collectors.toMap(NodeSpec::nodeId, n -> n.spine() + "/" + n.rack()));
        ClusterState state = cluster(nodes, PlacementPolicy.BINPACK);
        Random random = new Random(42);
        List<String> live = new ArrayList<>();
        int eligible = 0;
        int withinOneRack = 0;
        for (int i = 0; i < 4_000; i++) {
            if (!live.isEmpty() && (random.nextInt(100) < 45 || state.inventory().eligibleFreeGpus() < 700)) {
                String victim = live.remove(random.nextInt(live.size()));
                state.cancel(victim, 1, Fixtures.T0).forEach(state::replay);
                continue;
            }
            boolean gang = random.nextInt(100) < 40;
            TaskGroup task = gang ? new TaskGroup("w", 1 + random.nextInt(8), 8, null, 1_000, 1_024)
                    : new TaskGroup("w", 1, 1 << random.nextInt(3), null, 1_000, 1_024);
            int maxRackFree = state.inventory().rackSummaries().stream().mapToInt(Inventory.RackSummary::freeGpus)
                    .max().orElse(0);
            String id = "j" + i;
            List<PlacementFact> facts = state.dispatch(new GangRequest(id, "t", 1, List.of(task)), Fixtures.T0);
            facts.forEach(state::replay);
            if (facts.get(0) instanceof PlacementFact.AllocationGranted g) {
                live.add(id);
                if (gang && task.totalGpus() <= maxRackFree) {
                    eligible++;
                    Set<String> racks = g.allocation().placements().stream().map(p -> rackOf.get(p.nodeId()))
                            .collect(Collectors.toSet());
                    withinOneRack += racks.size() == 1 ? 1 : 0;
                }
            }
        }
        assertThat(eligible).isGreaterThan(500);
        assertThat((double) withinOneRack / eligible).isGreaterThanOrEqualTo(0.99);
    }

    /** The whole-GPU pods of the openb trace, in creation order, on the openb inventory. */
    @Test
    void binpackingTheOpenbPodsStrandsFewerGpusThanSpreadingThem() throws IOException {
        List<String> pods = trace("alibaba-openb/openb_pod_list_default.csv");
        List<NodeSpec> nodes = openb();
        double[] fragmentation = new double[2];
        int[] placed = new int[2];
        for (PlacementPolicy policy : PlacementPolicy.values()) {
            ClusterState state = cluster(nodes, policy);
            for (int i = 1; i < pods.size() && state.inventory().eligibleFreeGpus() > 1_500; i++) {
                String[] f = pods.get(i).split(",", -1);
                int gpus = Integer.parseInt(f[3]);
                if (gpus == 0 || (gpus == 1 && Integer.parseInt(f[4]) < 1000)) {
                    continue; // CPU-only and fractional pods are not placed by this phase
                }
                TaskGroup t = new TaskGroup("pod", 1, gpus, f[5].isBlank() ? null : f[5], Integer.parseInt(f[1]),
                        Long.parseLong(f[2]));
                List<PlacementFact> facts = state.dispatch(new GangRequest(f[0], "t", 1, List.of(t)), Fixtures.T0);
                facts.forEach(state::replay);
                placed[policy.ordinal()] += facts.get(0) instanceof PlacementFact.AllocationGranted ? 1 : 0;
            }
            TopologyProperties.assertNoDeviceTwice(state);
            fragmentation[policy.ordinal()] = state.inventory().fragmentation(List.of(1, 2, 4, 8));
        }
        assertThat(placed[PlacementPolicy.BINPACK.ordinal()]).isGreaterThan(1_000);
        assertThat(fragmentation[PlacementPolicy.BINPACK.ordinal()])
                .isLessThan(fragmentation[PlacementPolicy.SPREAD.ordinal()]);
    }
}
