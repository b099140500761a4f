package io.gantry.placement.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Fluent builders for the core tests: {@code aNode("n1").gpus(8, "H100")}, {@code aGang("j1").task("w", 2, 4)}. */
final class Fixtures {
    static final String SIM = "simulated";
    static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private Fixtures() {
    }

    static NodeBuilder aNode(String id) {
        return new NodeBuilder(id);
    }

    static GangBuilder aGang(String jobId) {
        return new GangBuilder(jobId);
    }

    /** Eight H100s, 96 cores, 1 TiB: the default simulated node. */
    static NodeBuilder anH100Node(String id) {
        return aNode(id).gpus(8, "H100");
    }

    static final class NodeBuilder {
        private final String id;
        private final List<Gpu> gpus = new ArrayList<>();
        private int cpuMillis = 96_000;
        private long memoryMiB = 1_048_576;
        private String backend = SIM;
        private final Map<String, String> labels = new HashMap<>();
        private final List<RdmaNic> nics = new ArrayList<>();
        private boolean server;
        private final List<Long> numaMemory = new ArrayList<>();

        /** Memory per NUMA socket (must add up to the node's memory). */
        NodeBuilder socketMemoryMiB(long... perSocket) {
            numaMemory.clear();
            long sum = 0;
            for (long m : perSocket) {
                numaMemory.add(m);
                sum += m;
            }
            this.memoryMiB = sum;
            return this;
        }

        NodeBuilder nic(String name, int numa, int pcieSwitch) {
            nics.add(new RdmaNic(name, numa, pcieSwitch, 400));
            return this;
        }

        NodeBuilder(String id) {
            this.id = id;
        }

        NodeBuilder gpus(int count, String model) {
            for (int i = 0; i < count; i++) {
                gpus.add(new Gpu(gpus.size(), model, 81_920));
            }
            return this;
        }

        /** Every GPU added so far becomes MIG-capable. */
        NodeBuilder migCapable() {
            gpus.replaceAll(g -> g.withMigCapable(true));
            return this;
        }

        NodeBuilder cpuMillis(int cpu) {
            this.cpuMillis = cpu;
            return this;
        }

        NodeBuilder memoryMiB(long memory) {
            this.memoryMiB = memory;
            return this;
        }

        NodeBuilder backend(String backend) {
            this.backend = backend;
            return this;
        }

        NodeBuilder label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        /** An 8 x H100 server with the default topology: 2 sockets, 4 PCIe switches, one NVLink domain. */
        NodeBuilder server() {
            server = true;
            return this;
        }

        NodeBuilder rack(String spine, String rack) {
            labels.put(NodeSpec.SPINE_LABEL, spine);
            labels.put(NodeSpec.RACK_LABEL, rack);
            return this;
        }

        NodeBuilder gpu(String model, int numa, int pcie, int nvlink) {
            gpus.add(new Gpu(gpus.size(), model, 81_920, numa, pcie, nvlink));
            return this;
        }

        NodeSpec build() {
            if (server) {
                return TraceClusters.eightGpuServer(id, backend, "H100", 81_920, cpuMillis, memoryMiB, labels)
                        .withRdmaNics(nics);
            }
            int sockets = gpus.stream().mapToInt(Gpu::numaNode).max().orElse(0) + 1;
            List<Integer> numa = new ArrayList<>();
            for (int s = 0; sockets > 1 && s < sockets; s++) {
                numa.add(cpuMillis / sockets + (s == 0 ? cpuMillis % sockets : 0));
            }
            return new NodeSpec(id, backend, gpus, cpuMillis, memoryMiB, labels, numa, nics, numaMemory);
        }
    }

    static final class GangBuilder {
        private final String jobId;
        private String tenant = "vision";
        private int attempt = 1;
        private final List<TaskGroup> tasks = new ArrayList<>();
        private Topology topology = Topology.ANYWHERE;
        private Long timeLimitSeconds;
        private PlacementPolicy policy;

        GangBuilder policy(PlacementPolicy policy) {
            this.policy = policy;
            return this;
        }

        private boolean checkpoints;

        GangBuilder(String jobId) {
            this.jobId = jobId;
        }

        GangBuilder tenant(String tenant) {
            this.tenant = tenant;
            return this;
        }

        GangBuilder attempt(int attempt) {
            this.attempt = attempt;
            return this;
        }

        /** Adds a task group of {@code replicas} x {@code gpus}, 1 core and 1 GiB each. */
        GangBuilder task(String name, int replicas, int gpus) {
            tasks.add(new TaskGroup(name, replicas, gpus, null, 1_000, 1_024));
            return this;
        }

        GangBuilder model(String model) {
            TaskGroup t = last();
            tasks.set(tasks.size() - 1, new TaskGroup(t.name(), t.replicas(), t.gpus(), model, t.cpuMillis(), t.memoryMiB()));
            return this;
        }

        GangBuilder cpuMillis(int cpu) {
            TaskGroup t = last();
            tasks.set(tasks.size() - 1, new TaskGroup(t.name(), t.replicas(), t.gpus(), t.gpuModel(), cpu, t.memoryMiB()));
            return this;
        }

        GangBuilder memoryMiB(long memory) {
            TaskGroup t = last();
            tasks.set(tasks.size() - 1, new TaskGroup(t.name(), t.replicas(), t.gpus(), t.gpuModel(), t.cpuMillis(), memory));
            return this;
        }

        GangBuilder required(TopologyLevel level) {
            topology = new Topology(level, topology.preferred().tighterThan(level) ? topology.preferred() : level);
            return this;
        }

        GangBuilder preferred(TopologyLevel level) {
            topology = new Topology(topology.required(), level);
            return this;
        }

        GangBuilder models(String... models) {
            TaskGroup t = last();
            tasks.set(tasks.size() - 1, t.withModels(List.of(models)));
            return this;
        }

        GangBuilder timeLimit(long seconds) {
            this.timeLimitSeconds = seconds;
            return this;
        }

        /** Replaces the last task group (for fields without their own builder method). */
        GangBuilder last(java.util.function.UnaryOperator<TaskGroup> change) {
            tasks.set(tasks.size() - 1, change.apply(last()));
            return this;
        }

        /** The last task asks for {@code milli} thousandths of one GPU (memory: the same fraction). */
        GangBuilder fraction(int milli) {
            return last(t -> t.withFraction(milli, null));
        }

        GangBuilder fraction(int milli, long gpuMemoryMiB) {
            return last(t -> t.withFraction(milli, gpuMemoryMiB));
        }

        GangBuilder mig(String profile) {
            return last(t -> t.withMig(profile));
        }

        GangBuilder tier(String tier) {
            TaskGroup t = last();
            tasks.set(tasks.size() - 1, t.withTier(tier));
            return this;
        }

        private TaskGroup last() {
            return tasks.get(tasks.size() - 1);
        }

        /** The job declares checkpoints (JobSpec.checkpoint). */
        GangBuilder checkpoints() {
            this.checkpoints = true;
            return this;
        }

        GangRequest build() {
            return new GangRequest(jobId, tenant, attempt, tasks, topology, timeLimitSeconds, policy, checkpoints);
        }
    }

    /** A ClusterState driven like the adapter drives it: every decision's facts are replayed at once. */
    static final class Cluster {
        final ClusterState state;

        Cluster() {
            this(new FirstFitPlacer());
        }

        Cluster(GangPlacer placer) {
            state = new ClusterState(SIM, placer);
        }

        static Cluster of(NodeBuilder... nodes) {
            return with(new FirstFitPlacer(), nodes);
        }

        static Cluster topology(NodeBuilder... nodes) {
            return with(new TopologyPlacer(), nodes);
        }

        static Cluster with(GangPlacer placer, NodeBuilder... nodes) {
            Cluster c = new Cluster(placer);
            for (NodeBuilder n : nodes) {
                c.apply(c.state.register(n.build()));
            }
            return c;
        }

        List<PlacementFact> apply(List<PlacementFact> facts) {
            facts.forEach(state::replay);
            return facts;
        }

        List<PlacementFact> dispatch(GangBuilder gang) {
            return apply(state.dispatch(gang.build(), T0));
        }

        Allocation granted(GangBuilder gang) {
            List<PlacementFact> facts = dispatch(gang);
            if (facts.size() != 1 || !(facts.get(0) instanceof PlacementFact.AllocationGranted g)) {
                throw new AssertionError("expected a grant, got " + facts);
            }
            return g.allocation();
        }

        PlacementDecision.Deferred deferred(GangBuilder gang) {
            List<PlacementFact> facts = dispatch(gang);
            if (facts.size() != 1 || !(facts.get(0) instanceof PlacementFact.PlacementDeferred d)) {
                throw new AssertionError("expected a deferral, got " + facts);
            }
            return new PlacementDecision.Deferred(d.reason(), d.message());
        }

        Cluster fail(String nodeId) {
            apply(state.nodeFailed(nodeId, T0));
            return this;
        }

        /** GPU indices held on each node, e.g. {@code {n1=[0, 1]}}. */
        Map<String, List<Integer>> held() {
            Map<String, List<Integer>> held = new java.util.TreeMap<>();
            for (NodeView n : state.snapshot().nodes()) {
                if (!n.allocatedTo().isEmpty()) {
                    held.put(n.nodeId(), List.copyOf(n.allocatedTo().keySet()));
                }
            }
            return held;
        }
    }
}
