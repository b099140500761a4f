package io.gantry.placement.core;

import io.gantry.placement.core.Inventory.Node;
import io.gantry.placement.core.Inventory.Rack;
import io.gantry.placement.core.Inventory.Spine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Topology-aware gang placement, all or nothing.
 *
 * <p>For each GPU-model preference rank, the levels NVLINK, NODE, RACK, SPINE, CLUSTER are tried tightest first,
 * up to the gang's required level; the first level with one domain that hosts the whole gang wins, so the worst
 * distance between the gang's GPUs is as small as this greedy search finds. Within a level, the candidate
 * domains are ordered by the policy (binpack: fewest free GPUs that still suffice; spread: most free), and the
 * gang is fitted into a domain replica by replica, largest first, each on a node the gang already uses if it
 * fits there, else on the best-fitting node (racks with the most free first above rack level, so a gang spans
 * as few racks as it can). Inside a node, GPUs are taken from the fullest NVLink domain, then PCIe switch, then
 * socket that still holds the whole task, and the task's CPU from that socket.
 *
 * <p>Greedy: a fit that needs backtracking across replicas may be missed (the gang is then deferred). When
 * nothing fits, {@link #diagnose} names the most specific reason and the level that failed.
 */
public final class TopologyPlacer implements GangPlacer {
    private final PlacementPolicy policy;
    private final GpuTiers tiers;
    private final GpuSharing sharing;

    public TopologyPlacer() {
        this(PlacementPolicy.BINPACK, Map.of());
    }

    /** @param tiers GPU tier name to its models in order of preference */
    public TopologyPlacer(PlacementPolicy policy, Map<String, List<String>> tiers) {
        this(policy, tiers, GpuSharing.DEFAULT);
    }

    /** @param sharing fraction overcommit and MIG profiles */
    public TopologyPlacer(PlacementPolicy policy, Map<String, List<String>> tiers, GpuSharing sharing) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.tiers = new GpuTiers(tiers);
        this.sharing = Objects.requireNonNull(sharing, "sharing");
    }

    @Override
    public GpuSharing sharing() {
        return sharing;
    }

    public PlacementPolicy policy() {
        return policy;
    }

    @Override
    public PlacementDecision place(InventorySnapshot inventory, GangRequest gang) {
        String backend = inventory.nodes().stream().filter(NodeView::eligible).map(n -> n.spec().backend())
                .findFirst().orElse("");
        return place(Inventory.of(inventory, backend, sharing), gang);
    }

    @Override
    public GpuTiers tiers() {
        return tiers;
    }

    /** The models a task accepts, in order of preference; empty = any single model; null = none ({@link GpuTiers}). */
    public List<String> acceptedModels(TaskGroup t) {
        return tiers.accepted(t);
    }

    /** One task replica to fit: whole GPUs, or part of one GPU ({@code milli} > 0 or a MIG profile). */
    private record Replica(int task, int replica, int gpus, int cpu, long mem, int milli, Long gpuMem, String mig) {
        boolean shared() {
            return milli > 0 || mig != null;
        }
    }

    /** Where a replica goes: whole GPUs ({@code mask}) or one share of device {@code sharePos}. */
    private record Step(Node node, long mask, int socket, String model, Replica rep, int sharePos, GpuShare share,
                        int slots) {
        Step(Node node, long mask, int socket, String model, Replica rep) {
            this(node, mask, socket, model, rep, -1, null, 0);
        }
    }

    @Override
    public PlacementDecision place(Inventory inv, GangRequest gang) {
        for (TaskGroup t : gang.tasks()) {
            if (acceptedModels(t) == null) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, tiers.whyNone(t));
            }
        }
        PlacementDecision.Placed placed = tryPlace(inv, gang);
        return placed != null ? placed : diagnose(inv, gang);
    }

    /** The placement, or null without saying why (no diagnosis: cheaper, for checks that need only the answer). */
    @Override
    public PlacementDecision.Placed tryPlace(Inventory inv, GangRequest gang) {
        List<TaskGroup> tasks = gang.tasks();
        List<List<String>> prefs = new ArrayList<>();
        int ranks = 1;
        for (TaskGroup t : tasks) {
            List<String> a = acceptedModels(t);
            if (a == null) {
                return null;
            }
            prefs.add(t.gpus() == 0 && !t.shared() ? List.of() : a);
            ranks = Math.max(ranks, a.size());
        }
        List<Replica> reps = new ArrayList<>();
        for (int ti = 0; ti < tasks.size(); ti++) {
            TaskGroup t = tasks.get(ti);
            for (int r = 0; r < t.replicas(); r++) {
                reps.add(new Replica(ti, r, t.gpus(), t.cpuMillis(), t.memoryMiB(),
                        t.gpuMilli() == null ? 0 : t.gpuMilli(), t.gpuMemoryMiB(), t.migProfile()));
            }
        }
        List<Replica> order = new ArrayList<>(reps);
        order.sort(Comparator.comparingInt((Replica r) -> -r.gpus())); // stable: spec order within a size
        int need = gang.totalGpus();
        int largestTask = tasks.stream().mapToInt(TaskGroup::gpus).max().orElse(0);
        if (largestTask > inv.maxNodeFree()) {
            return null; // no node has that many free: no level can help
        }
        TopologyLevel start = need >= 2 ? TopologyLevel.NVLINK : TopologyLevel.NODE;
        boolean spread = (gang.policy() != null ? gang.policy() : policy) == PlacementPolicy.SPREAD;
        String[] previous = null;
        for (int rank = 0; rank < ranks; rank++) {
            String[] models = new String[tasks.size()];
            for (int ti = 0; ti < tasks.size(); ti++) {
                List<String> p = prefs.get(ti);
                models[ti] = p.isEmpty() ? null : p.get(Math.min(rank, p.size() - 1));
            }
            if (Arrays.equals(models, previous)) {
                continue;
            }
            previous = models;
            for (TopologyLevel level : TopologyLevel.values()) {
                if (level.tighterThan(start) || gang.topology().required().tighterThan(level)) {
                    continue;
                }
                List<Step> steps = tryLevel(inv, level, order, models, need, spread);
                if (steps != null) {
                    return placed(gang, reps, steps);
                }
                if (level == TopologyLevel.NODE && order.size() == 1) {
                    break; // one replica that no single node takes: no wider level takes it either
                }
            }
        }
        return null;
    }

    @Override
    public boolean mightFitOn(Inventory inv, GangRequest gang, Set<String> nodeIds) {
        Set<String> some = mightFitNodes(inv, gang, nodeIds, 1);
        return some == null || !some.isEmpty();
    }

    /**
     * Of {@code nodeIds}, those a one-replica gang might fit on, at most {@code limit} of them (the first found), or
     * null when it cannot tell (more replicas, or a topology tighter than a node).
     */
    @Override
    public Set<String> mightFitNodes(Inventory inv, GangRequest gang, Set<String> nodeIds, int limit) {
        if (gang.replicaCount() != 1 || gang.topology().required().tighterThan(TopologyLevel.NODE)) {
            return null;
        }
        Set<String> out = new java.util.LinkedHashSet<>();
        TaskGroup t = gang.tasks().get(0);
        List<String> accepted = acceptedModels(t);
        if (accepted == null) {
            return out;
        }
        List<Replica> order = List.of(new Replica(0, 0, t.gpus(), t.cpuMillis(), t.memoryMiB(),
                t.gpuMilli() == null ? 0 : t.gpuMilli(), t.gpuMemoryMiB(), t.migProfile()));
        List<String> prefs = t.gpus() == 0 && !t.shared() ? List.of() : accepted;
        String[] models = new String[1];
        for (int rank = 0; rank < Math.max(1, prefs.size()); rank++) {
            models[0] = prefs.isEmpty() ? null : prefs.get(rank);
            for (String id : nodeIds) {
                if (out.contains(id)) {
                    continue;
                }
                Node n = inv.node(id);
                if (n != null && n.eligible && fit(inv, List.of(n), -1L, order, models, false, false) != null) {
                    out.add(id);
                    if (out.size() >= limit) {
                        return out;
                    }
                }
            }
        }
        return out;
    }

    private PlacementDecision.Placed placed(GangRequest gang, List<Replica> reps, List<Step> steps) {
        PlacedTask[] out = new PlacedTask[reps.size()];
        for (Step s : steps) {
            List<Integer> indices = new ArrayList<>(s.rep.gpus());
            for (long m = s.mask; m != 0; m &= m - 1) {
                indices.add(s.node.index[Long.numberOfTrailingZeros(m)]);
            }
            TaskGroup t = gang.tasks().get(s.rep.task());
            out[reps.indexOf(s.rep)] = new PlacedTask(t.name(), s.rep.replica(), s.node.id,
                    s.rep.gpus() == 0 && s.share == null ? null : s.model, indices, t.cpuMillis(), t.memoryMiB(),
                    s.node.spec.socketCoreIds(s.socket), null, s.share == null ? List.of() : List.of(s.share));
        }
        return new PlacementDecision.Placed(List.of(out));
    }

    // ------------------------------------------------------------------ levels

    private List<Step> tryLevel(Inventory inv, TopologyLevel level, List<Replica> order, String[] models, int need,
                                boolean spread) {
        // a gang over several nodes talks over the fabric: among equally good nodes, take GPUs next to a NIC
        boolean nics = !level.tighterThan(TopologyLevel.RACK);
        switch (level) {
            case NVLINK, NODE -> {
                if (need > inv.maxNodeFree()) {
                    return null;
                }
                for (Node n : inv.byFree(need, spread)) {
                    if (level == TopologyLevel.NODE) {
                        List<Step> s = fit(inv, List.of(n), -1L, order, models, spread, false);
                        if (s != null) {
                            return s;
                        }
                        continue;
                    }
                    long[] domains = n.nvlinkMasks.clone();
                    sortMasks(domains, n.free, spread);
                    for (long d : domains) {
                        if (Long.bitCount(d & n.free) >= need) {
                            List<Step> s = fit(inv, List.of(n), d, order, models, spread, false);
                            if (s != null) {
                                return s;
                            }
                        }
                    }
                }
                return null;
            }
            case RACK -> {
                List<Rack> racks = new ArrayList<>();
                for (Rack r : inv.racks()) {
                    if (r.free >= need) {
                        racks.add(r);
                    }
                }
                racks.sort(Comparator.comparingInt((Rack r) -> spread ? -r.free : r.free));
                for (Rack r : racks) {
                    List<Step> s = fit(inv, List.of(r), -1L, order, models, spread, nics);
                    if (s != null) {
                        return s;
                    }
                }
                return null;
            }
            case SPINE -> {
                List<Spine> spines = new ArrayList<>();
                for (Spine sp : inv.spines()) {
                    if (sp.free >= need) {
                        spines.add(sp);
                    }
                }
                spines.sort(Comparator.comparingInt((Spine sp) -> spread ? -sp.free : sp.free));
                for (Spine sp : spines) {
                    List<Step> s = fit(inv, racksByFree(sp.racks.values()), -1L, order, models, spread, nics);
                    if (s != null) {
                        return s;
                    }
                }
                return null;
            }
            default -> {
                if (inv.eligibleFreeGpus() < need) {
                    return null;
                }
                List<Rack> all = new ArrayList<>();
                inv.racks().forEach(all::add);
                return fit(inv, racksByFree(all), -1L, order, models, spread, nics);
            }
        }
    }

    private static List<Rack> racksByFree(Iterable<Rack> racks) {
        List<Rack> out = new ArrayList<>();
        for (Rack r : racks) {
            if (r.free > 0 || r.total > 0 || !r.nodes.isEmpty()) {
                out.add(r);
            }
        }
        out.sort(Comparator.comparingInt((Rack r) -> -r.free)); // fewest racks for a gang bigger than one
        return out;
    }

    /** Fullest first (binpack) or emptiest first (spread), by free bits; ties keep domain order. */
    private static void sortMasks(long[] masks, long free, boolean spread) {
        Long[] boxed = Arrays.stream(masks).boxed().toArray(Long[]::new);
        Arrays.sort(boxed, Comparator.comparingInt((Long m) -> spread ? -Long.bitCount(m & free) : Long.bitCount(m & free)));
        for (int i = 0; i < masks.length; i++) {
            masks[i] = boxed[i];
        }
    }

    /** Fits every replica onto the nodes of {@code domain} (nodes, or racks in the order to try), or returns null. */
    private List<Step> fit(Inventory inv, List<?> domain, long allowed, List<Replica> order, String[] models,
                           boolean spread, boolean nics) {
        List<Step> steps = new ArrayList<>(order.size());
        Set<Node> used = new LinkedHashSet<>();
        try {
            for (Replica rep : order) {
                String model = models[rep.task()];
                int modelId = model == null ? -1 : inv.knownModelId(model);
                if (model != null && modelId < 0) {
                    return null; // no node has the model
                }
                Step step = best(used, rep, model, modelId, allowed, spread, nics);
                if (step == null) {
                    for (Object d : domain) {
                        Iterable<Node> candidates = d instanceof Rack r ? r.nodes.values() : List.of((Node) d);
                        step = best(candidates, rep, model, modelId, allowed, spread, nics);
                        if (step != null) {
                            break;
                        }
                    }
                }
                if (step == null) {
                    return null;
                }
                if (step.share != null) {
                    inv.takeShare(step.node, step.sharePos, step.share.milli(), step.share.memoryMiB(), step.slots,
                            step.socket, rep.cpu(), rep.mem());
                } else {
                    inv.takeRaw(step.node, step.mask, step.socket, rep.cpu(), rep.mem());
                }
                steps.add(step);
                used.add(step.node);
            }
            return new ArrayList<>(steps);
        } finally {
            for (int i = steps.size() - 1; i >= 0; i--) {
                Step s = steps.get(i);
                if (s.share != null) {
                    inv.untakeShare(s.node, s.sharePos, s.share.milli(), s.share.memoryMiB(), s.slots, s.socket,
                            s.rep.cpu(), s.rep.mem());
                } else {
                    inv.untake(s.node, s.mask, s.socket, s.rep.cpu(), s.rep.mem());
                }
            }
        }
    }

    /**
     * The best-fitting node for one replica among {@code nodes}: fewest free GPUs (spread: most), then, with
     * {@code nics}, one whose chosen GPUs share a PCIe switch with an RDMA NIC, then node order.
     */
    private Step best(Iterable<Node> nodes, Replica rep, String model, int modelId, long allowed, boolean spread,
                      boolean nics) {
        Step best = null;
        int bestFree = 0;
        boolean bestNic = false;
        for (Node n : nodes) {
            if (!n.eligible || n.memFree < rep.mem() || Long.bitCount(n.free & allowed) < rep.gpus()) {
                continue;
            }
            int free = n.freeCount();
            if (best != null && (spread ? free < bestFree : free > bestFree)) {
                continue;
            }
            if (best != null && free == bestFree && (!nics || bestNic || n.nicMask == 0 || rep.gpus() == 0)) {
                continue;
            }
            Step s = choose(n, rep, model, modelId, allowed);
            if (s != null) {
                boolean nic = (s.mask & n.nicMask) != 0;
                if (best != null && free == bestFree && !nic) {
                    continue;
                }
                best = s;
                bestFree = free;
                bestNic = nic;
            }
        }
        return best;
    }

    /**
     * The GPUs and socket one replica would get on node {@code n}, or null when it does not fit there;
     * {@code modelId} is the inventory's id of {@code model} (unused when the model is null).
     */
    private Step choose(Node n, Replica rep, String model, int modelId, long allowed) {
        if (n.memFree < rep.mem()) {
            return null;
        }
        if (rep.shared()) {
            return chooseShare(n, rep, model, modelId, allowed);
        }
        if (rep.gpus() == 0) {
            int socket = -1;
            for (int s = 0; s < n.cpuFree.length; s++) {
                if (n.cpuFree[s] >= rep.cpu() && n.memOn(s, rep.mem())
                        && (socket < 0 || n.cpuFree[s] > n.cpuFree[socket])) {
                    socket = s;
                }
            }
            return socket < 0 ? null : new Step(n, 0L, socket, null, rep);
        }
        long cpuOk = 0;
        for (int s = 0; s < n.cpuFree.length; s++) {
            // CPU, and memory when the node registers it per socket, come from the socket of the task's GPUs
            if (n.cpuFree[s] >= rep.cpu() && n.memOn(s, rep.mem())) {
                cpuOk |= n.socketMasks[s];
            }
        }
        long base = n.free & allowed & cpuOk;
        if (model != null) {
            long m = n.maskOf(modelId);
            return m == 0 ? null : pick(n, rep, model, base & m);
        }
        for (Map.Entry<String, Long> e : n.modelMasks.entrySet()) {
            Step s = pick(n, rep, e.getKey(), base & e.getValue());
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    private static Step pick(Node n, Replica rep, String model, long candidates) {
        int g = rep.gpus();
        if (Long.bitCount(candidates) < g) {
            return null;
        }
        long s = candidates;
        s = narrow(s, n.nvlinkMasks, g);
        s = narrow(s, n.pcieMasks, g);
        s = narrow(s, n.socketMasks, g);
        long mask = 0;
        for (int i = 0; i < g; i++) {
            long low = Long.lowestOneBit(s);
            mask |= low;
            s &= ~low;
        }
        int[] perSocket = new int[n.cpuFree.length];
        for (long m = mask; m != 0; m &= m - 1) {
            perSocket[n.numa[Long.numberOfTrailingZeros(m)]]++;
        }
        int socket = 0;
        for (int i = 1; i < perSocket.length; i++) {
            if (perSocket[i] > perSocket[socket]) {
                socket = i;
            }
        }
        if (n.cpuFree[socket] < rep.cpu()) {
            return null;
        }
        return new Step(n, mask, socket, model, rep);
    }

    /**
     * Part of one GPU for a replica on node {@code n}: binpacked onto a device already shared the same way (the
     * fullest that still has room: most thousandths, or most MIG slots, in use), else a whole free device of the
     * fullest NVLink domain / PCIe switch / socket, so whole GPUs stay free. A device is whole, fraction-shared or
     * MIG-partitioned, never two at once. Null when nothing on the node fits.
     */
    private Step chooseShare(Node n, Replica rep, String model, int modelId, long allowed) {
        long cpuOk = 0;
        for (int s = 0; s < n.cpuFree.length; s++) {
            if (n.cpuFree[s] >= rep.cpu() && n.memOn(s, rep.mem())) {
                cpuOk |= n.socketMasks[s];
            }
        }
        Step best = null;
        int bestUsed = -1;
        long whole = 0;
        int milliCap = sharing.milliCapacity();
        long ofModel = model == null ? -1L : n.maskOf(modelId);
        if (ofModel == 0) {
            return null;
        }
        // a cordoned device takes no new share either (it is never whole-free, but may still hold shares)
        for (long m = cpuOk & allowed & ofModel & ~n.cordonedMask; m != 0; m &= m - 1) {
            int pos = Long.numberOfTrailingZeros(m);
            Gpu g = n.spec.gpus().get(pos);
            boolean wholeFree = (n.free & (1L << pos)) != 0;
            if (rep.mig() != null) {
                MigProfile p = sharing.mig().profile(g, rep.mig());
                if (p == null) {
                    continue;
                }
                if (wholeFree) {
                    whole |= 1L << pos;
                } else if (n.shareCount[pos] > 0 && n.migSlots[pos] != 0) {
                    int start = firstStart(p, n.migSlots[pos]);
                    int used = Integer.bitCount(n.migSlots[pos]);
                    if (start >= 0 && used > bestUsed) {
                        bestUsed = used;
                        best = migStep(n, pos, g, p, start, rep);
                    }
                }
            } else {
                long need = fractionMemory(rep, g);
                if (need > sharing.memoryCapacity(g.memoryMiB())) {
                    continue;
                }
                if (wholeFree) {
                    whole |= 1L << pos;
                } else if (n.shareCount[pos] > 0 && n.migSlots[pos] == 0
                        && n.shareMilli[pos] + rep.milli() <= milliCap
                        && n.shareMem[pos] + need <= sharing.memoryCapacity(g.memoryMiB())
                        && n.shareMilli[pos] > bestUsed) {
                    bestUsed = n.shareMilli[pos];
                    best = new Step(n, 0L, n.numa[pos], g.model(), rep, pos,
                            GpuShare.fraction(g.index(), rep.milli(), need), 0);
                }
            }
        }
        if (best != null || whole == 0) {
            return best;
        }
        long s = narrow(narrow(narrow(whole, n.nvlinkMasks, 1), n.pcieMasks, 1), n.socketMasks, 1);
        int pos = Long.numberOfTrailingZeros(s);
        Gpu g = n.spec.gpus().get(pos);
        if (rep.mig() != null) {
            MigProfile p = sharing.mig().profile(g, rep.mig());
            return migStep(n, pos, g, p, p.starts().get(0), rep);
        }
        return new Step(n, 0L, n.numa[pos], g.model(), rep, pos, GpuShare.fraction(g.index(), rep.milli(),
                fractionMemory(rep, g)), 0);
    }

    private static Step migStep(Node n, int pos, Gpu g, MigProfile p, int start, Replica rep) {
        return new Step(n, 0L, n.numa[pos], g.model(), rep, pos,
                new GpuShare(g.index(), p.milli(), p.memoryMiB(), p.name(), start), p.slots(start));
    }

    /** The GPU memory a fraction needs on device {@code g}: as asked, or the same fraction of its memory. */
    private static long fractionMemory(Replica rep, Gpu g) {
        return rep.gpuMem() != null ? rep.gpuMem() : g.memoryMiB() * rep.milli() / 1000;
    }

    /** The first valid start of the profile whose slots are all free, or -1. */
    private static int firstStart(MigProfile p, int usedSlots) {
        for (int start : p.starts()) {
            if ((p.slots(start) & usedSlots) == 0) {
                return start;
            }
        }
        return -1;
    }

    /** The fullest group of this level that still holds {@code g} candidates, or the candidates unchanged. */
    private static long narrow(long candidates, long[] groups, int g) {
        long best = 0;
        int bestCount = Integer.MAX_VALUE;
        for (long group : groups) {
            int c = Long.bitCount(candidates & group);
            if (c >= g && c < bestCount) {
                best = candidates & group;
                bestCount = c;
            }
        }
        return bestCount == Integer.MAX_VALUE ? candidates : best;
    }

    // ------------------------------------------------------------------ explain

    /** Why the gang does not fit, most specific reason first, naming the level that failed and the numbers. */
    public PlacementDecision.Deferred diagnose(Inventory inv, GangRequest gang) {
        if (inv.eligibleNodes() == 0) {
            String why = inv.nodeCount() == 0 ? "no node has registered"
                    : "none of the " + inv.nodeCount() + " known nodes is healthy";
            return new PlacementDecision.Deferred(DeferralCause.NO_HEALTHY_NODES, why);
        }
        java.util.TreeSet<String> models = new java.util.TreeSet<>();
        for (Node n : inv.nodes()) {
            if (n.eligible) {
                models.addAll(n.modelMasks.keySet());
            }
        }
        String have = models.isEmpty() ? "no GPUs" : String.join(", ", models);
        for (TaskGroup t : gang.tasks()) {
            if (acceptedModels(t) == null) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, tiers.whyNone(t));
            }
        }
        for (TaskGroup t : gang.tasks()) {
            if (t.gpus() == 0 && !t.shared()) {
                continue;
            }
            List<String> accepted = acceptedModels(t);
            if (!accepted.isEmpty() && accepted.stream().noneMatch(models::contains)) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, "task " + t.name()
                        + " needs GPU model " + describe(t, accepted) + "; healthy nodes have " + have);
            }
        }
        for (TaskGroup t : gang.tasks()) {
            PlacementDecision.Deferred never = neverShared(inv, t);
            if (never != null) {
                return never;
            }
        }
        for (TaskGroup t : gang.tasks()) {
            List<String> accepted = acceptedModels(t);
            boolean fits = false;
            int gpus = 0;
            int cpu = 0;
            long mem = 0;
            for (Node n : inv.nodes()) {
                if (!n.eligible) {
                    continue;
                }
                int g = capacity(n, accepted);
                gpus = Math.max(gpus, g);
                cpu = Math.max(cpu, n.maxSocketCapacity());
                mem = Math.max(mem, n.spec.maxSocketMemoryMiB());
                fits |= g >= t.gpus() && n.maxSocketCapacity() >= t.cpuMillis()
                        && n.spec.maxSocketMemoryMiB() >= t.memoryMiB();
            }
            if (!fits) {
                String word = accepted.isEmpty() ? " GPUs" : " " + String.join("/", accepted) + " GPUs";
                return new PlacementDecision.Deferred(DeferralCause.TASK_LARGER_THAN_ANY_NODE, "task " + t.name()
                        + " needs " + t.gpus() + word + ", " + t.cpuMillis() + " mCPU on one NUMA socket and "
                        + t.memoryMiB() + " MiB on one node (on its socket, where memory is per socket); the largest"
                        + " healthy node has " + gpus + word + ", "
                        + cpu + " mCPU per socket and " + mem + " MiB");
            }
        }
        int need = gang.totalGpus();
        if (need > inv.eligibleGpus()) {
            return new PlacementDecision.Deferred(DeferralCause.GANG_LARGER_THAN_CLUSTER, "needs " + need
                    + " GPUs as " + gang.shape() + ", the cluster has " + inv.eligibleGpus() + " healthy GPUs");
        }
        TopologyLevel required = gang.topology().required();
        String within = " within " + required.phrase() + " (required)";
        if (required != TopologyLevel.CLUSTER) {
            Domain largest = largest(inv, required, false);
            if (largest.gpus < need) {
                return new PlacementDecision.Deferred(DeferralCause.TOPOLOGY_UNSATISFIABLE, "needs " + need
                        + " GPUs as " + gang.shape() + within + "; the largest " + noun(required)
                        + (largest.name == null ? "" : ", " + largest.name + ",") + " has " + largest.gpus + " GPUs");
            }
        }
        int free = inv.eligibleFreeGpus();
        if (free < need) {
            return new PlacementDecision.Deferred(DeferralCause.INSUFFICIENT_FREE_GPUS,
                    "needs " + need + " GPUs, " + free + " free");
        }
        if (required != TopologyLevel.CLUSTER) {
            Domain best = largest(inv, required, true);
            if (best.gpus < need) {
                return new PlacementDecision.Deferred(DeferralCause.TOPOLOGY_UNSATISFIABLE, "needs " + need
                        + " GPUs" + within + "; the best " + noun(required)
                        + (best.name == null ? "" : ", " + best.name + ",") + " has " + best.gpus + " free ("
                        + free + " free in the cluster)");
            }
        }
        for (TaskGroup t : gang.tasks()) {
            int most = 0;
            for (Node n : inv.nodes()) {
                if (n.eligible) {
                    most = Math.max(most, freeOf(n, acceptedModels(t)));
                }
            }
            if (most < t.gpus()) {
                return new PlacementDecision.Deferred(DeferralCause.FRAGMENTED, "task " + t.name() + " needs "
                        + t.gpus() + " GPUs on one node; " + free + " GPUs are free in the cluster but the most "
                        + "free on one node is " + most);
            }
        }
        List<TaskGroup> whole = gang.tasks().stream().filter(t -> t.gpus() > 0 && !t.shared()).toList();
        if (whole.size() == 1 && gang.tasks().stream().noneMatch(TaskGroup::shared)) {
            // one group of whole-GPU replicas: enough GPUs are free, but do they come in node-sized pieces?
            TaskGroup t = whole.get(0);
            int fit = 0;
            int most = 0;
            for (Node n : inv.nodes()) {
                if (n.eligible) {
                    int f = freeOf(n, acceptedModels(t));
                    fit += f / t.gpus();
                    most = Math.max(most, f);
                }
            }
            if (fit < t.replicas()) {
                return new PlacementDecision.Deferred(DeferralCause.FRAGMENTED, "needs " + need + " GPUs as "
                        + gang.shape() + ", " + free + " free in the cluster, but the nodes' free GPUs hold only "
                        + fit + " of its " + t.replicas() + " tasks of " + t.gpus() + " (the most free on one node: "
                        + most + ")");
            }
        }
        for (TaskGroup t : gang.tasks()) {
            if (t.shared()) {
                return new PlacementDecision.Deferred(DeferralCause.INSUFFICIENT_FREE_GPUS, "task " + t.name()
                        + " needs " + sharedPhrase(t) + "; no healthy GPU" + modelPhrase(acceptedModels(t))
                        + " has that much unshared room free (with the CPU on its NUMA socket and the memory)");
            }
        }
        if (need == 0) {
            // CPU and memory only: say what is short, not GPUs
            long cpu = gang.tasks().stream().mapToLong(t -> (long) t.replicas() * t.cpuMillis()).sum();
            long memory = gang.tasks().stream().mapToLong(t -> t.replicas() * t.memoryMiB()).sum();
            return new PlacementDecision.Deferred(DeferralCause.INSUFFICIENT_FREE_GPUS, "needs " + cpu + " mCPU and "
                    + memory + " MiB as " + gang.tasks().stream().mapToInt(TaskGroup::replicas).sum() + " tasks (no "
                    + "GPUs)" + (required == TopologyLevel.CLUSTER ? "" : within) + "; no "
                    + (required == TopologyLevel.CLUSTER ? "set of nodes" : noun(required))
                    + " has that much CPU and memory free for every task now");
        }
        return new PlacementDecision.Deferred(DeferralCause.INSUFFICIENT_FREE_GPUS, "needs " + need + " GPUs as "
                + gang.shape() + (required == TopologyLevel.CLUSTER ? "" : within) + ", " + free + " free, but no "
                + (required == TopologyLevel.CLUSTER ? "set of nodes" : noun(required))
                + " fits every task with its GPU model, CPU (on the GPUs' NUMA socket) and memory");
    }

    /** Why a fraction / MIG task can never be placed on this pool (even empty), or null when it could. */
    private PlacementDecision.Deferred neverShared(Inventory inv, TaskGroup t) {
        if (!t.shared()) {
            return null;
        }
        List<String> accepted = acceptedModels(t);
        long largest = 0;
        for (Node n : inv.nodes()) {
            if (!n.eligible) {
                continue;
            }
            for (Gpu g : n.spec.gpus()) {
                if (!accepted.isEmpty() && !accepted.contains(g.model())) {
                    continue;
                }
                if (t.migProfile() != null ? sharing.mig().profile(g, t.migProfile()) != null
                        : t.gpuMemoryMiB() == null || t.gpuMemoryMiB() <= sharing.memoryCapacity(g.memoryMiB())) {
                    return null;
                }
                largest = Math.max(largest, g.memoryMiB());
            }
        }
        if (t.migProfile() != null) {
            return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, "task " + t.name()
                    + " asks for MIG profile " + t.migProfile() + "; no healthy MIG-capable GPU"
                    + modelPhrase(accepted) + " offers it" + (MigProfiles.known(t.migProfile()) ? ""
                    : " (it is not a standard profile of A100-40GB, A100-80GB or H100-80GB)"));
        }
        return new PlacementDecision.Deferred(DeferralCause.TASK_LARGER_THAN_ANY_NODE, "task " + t.name()
                + " needs " + t.gpuMemoryMiB() + " MiB of one GPU's memory; the largest healthy GPU"
                + modelPhrase(accepted) + " has " + largest + " MiB");
    }

    private static String sharedPhrase(TaskGroup t) {
        if (t.migProfile() != null) {
            return "a MIG instance " + t.migProfile();
        }
        return t.gpuMilli() + "/1000 of one GPU" + (t.gpuMemoryMiB() == null ? "" : " with " + t.gpuMemoryMiB()
                + " MiB of its memory");
    }

    private static String modelPhrase(List<String> accepted) {
        return accepted == null || accepted.isEmpty() ? "" : " of model " + String.join(" or ", accepted);
    }

    private static String describe(TaskGroup t, List<String> accepted) {
        String list = String.join(" or ", accepted);
        return t.gpuTier() != null && t.gpuModel() == null && t.gpuModels().isEmpty()
                ? list + " (tier " + t.gpuTier() + ")" : list;
    }

    private static String noun(TopologyLevel level) {
        return switch (level) {
            case NVLINK -> "NVLink domain";
            case NODE -> "node";
            case RACK -> "rack";
            case SPINE -> "spine";
            case CLUSTER -> "cluster";
        };
    }

    private static int capacity(Node n, List<String> accepted) {
        int max = 0;
        for (Map.Entry<String, Long> e : n.modelMasks.entrySet()) {
            if (accepted.isEmpty() || accepted.contains(e.getKey())) {
                max = Math.max(max, Long.bitCount(e.getValue()));
            }
        }
        return max;
    }

    private static int freeOf(Node n, List<String> accepted) {
        int max = 0;
        for (Map.Entry<String, Long> e : n.modelMasks.entrySet()) {
            if (accepted == null || accepted.isEmpty() || accepted.contains(e.getKey())) {
                max = Math.max(max, Long.bitCount(e.getValue() & n.free));
            }
        }
        return max;
    }

    private record Domain(String name, int gpus) {
    }

    /** The domain of {@code level} with the most (free) GPUs among eligible nodes; ties: the first by name. */
    private static Domain largest(Inventory inv, TopologyLevel level, boolean free) {
        Domain best = new Domain(null, 0);
        switch (level) {
            case NVLINK, NODE -> {
                for (Node n : inv.nodes()) {
                    if (!n.eligible) {
                        continue;
                    }
                    long avail = free ? n.free : (n.count == 64 ? -1L : (1L << n.count) - 1);
                    if (level == TopologyLevel.NODE) {
                        int c = Long.bitCount(avail);
                        if (c > best.gpus) {
                            best = new Domain(n.id, c);
                        }
                    } else {
                        for (int d = 0; d < n.nvlinkMasks.length; d++) {
                            int c = Long.bitCount(avail & n.nvlinkMasks[d]);
                            if (c > best.gpus) {
                                best = new Domain(n.id + " NVLink domain " + d, c);
                            }
                        }
                    }
                }
            }
            case RACK -> {
                for (Rack r : inv.racks()) {
                    int c = free ? r.free : r.total;
                    if (c > best.gpus) {
                        best = new Domain(r.spine.name.equals(NodeSpec.UNLABELLED) ? r.name : r.key, c);
                    }
                }
            }
            case SPINE -> {
                for (Spine s : inv.spines()) {
                    int c = free ? s.free : s.total;
                    if (c > best.gpus) {
                        best = new Domain(s.name, c);
                    }
                }
            }
            default -> best = new Domain(null, free ? inv.eligibleFreeGpus() : inv.eligibleGpus());
        }
        return best;
    }

    @Override
    public String toString() {
        return "topology (" + policy.name().toLowerCase(java.util.Locale.ROOT) + ")";
    }
}
