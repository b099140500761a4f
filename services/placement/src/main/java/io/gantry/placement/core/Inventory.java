package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The free capacity of the pool, indexed so a placement does not scan every device: per node a bitmask of free
 * GPUs (plus masks per model, NVLink domain, PCIe switch and socket) and free CPU per socket; per rack and spine
 * the free and total GPU counts of eligible nodes; and the eligible nodes bucketed by their free GPU count, so
 * "the fullest node that still fits" is the first fitting node of the lowest bucket that can hold the request.
 *
 * <p>Mutable, but only through {@link ClusterState} (grants, releases, registrations, health) and, transiently,
 * by a placer that fits a gang step by step and undoes every step before it returns.
 */
public final class Inventory {
    private static final Comparator<Node> BY_ID = Comparator.comparing(n -> n.id);

    private final String backend;
    private final GpuSharing sharing;
    private final TreeMap<String, Node> nodes = new TreeMap<>();
    private final TreeMap<String, Spine> spines = new TreeMap<>();
    private final TreeMap<String, Rack> racks = new TreeMap<>();
    @SuppressWarnings("unchecked")
    private final TreeSet<Node>[] byFree = new TreeSet[NodeSpec.MAX_GPUS + 1];
    private int eligibleGpus;
    private int eligibleFree;
    private int eligibleNodes;
    /** GPU model to a small id, for the per-model counters below. */
    private final Map<String, Integer> modelIds = new java.util.HashMap<>();
    private final List<String> modelNames = new ArrayList<>();
    /** Nodes with at least one shared (fraction or MIG) device: where a fraction may fit when no whole GPU is free. */
    private final java.util.Set<Node> sharedNodes =
            java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    /** Per model id: free whole GPUs of that model on eligible nodes. */
    private int[] modelFree = new int[4];
    /** Per model id: how many eligible nodes with that model have f free of it (f = 0..64). */
    private int[][] modelNodesByFree = new int[4][];

    public Inventory(String backend) {
        this(backend, GpuSharing.DEFAULT);
    }

    public Inventory(String backend, GpuSharing sharing) {
        this.backend = backend;
        this.sharing = java.util.Objects.requireNonNull(sharing, "sharing");
        for (int i = 0; i < byFree.length; i++) {
            byFree[i] = new TreeSet<>(BY_ID);
        }
    }

    /** A GPU held by a job, as recorded when building a node from the live allocations. */
    public record Holding(String jobId, PlacedTask task) {
    }

    /** Part of a GPU held by a job (a fraction or a MIG instance). */
    public record ShareHolder(String jobId, GpuShare share) {
    }

    /** An index over a snapshot, for placers called with a snapshot only (tests, the full-rebuild benchmark). */
    public static Inventory of(InventorySnapshot snapshot, String backend) {
        return of(snapshot, backend, GpuSharing.DEFAULT);
    }

    public static Inventory of(InventorySnapshot snapshot, String backend, GpuSharing sharing) {
        Inventory inv = new Inventory(backend, sharing);
        for (NodeView v : snapshot.nodes()) {
            Node n = new Node(v.spec());
            for (Map.Entry<Integer, List<ShareHolder>> e : v.shares().entrySet()) {
                int pos = n.pos(e.getKey());
                if (pos >= 0) {
                    for (ShareHolder h : e.getValue()) {
                        inv.shareOn(n, pos, h.jobId(), h.share(), true);
                    }
                }
            }
            for (Map.Entry<Integer, String> e : v.allocatedTo().entrySet()) {
                int pos = n.pos(e.getKey());
                if (pos >= 0) {
                    n.free &= ~(1L << pos);
                    n.foreignMask &= ~(1L << pos);
                    n.holder[pos] = e.getValue();
                }
            }
            for (int s = 0; s < n.cpuFree.length && s < v.freeSocketCpuMillis().size(); s++) {
                n.cpuFree[s] = v.freeSocketCpuMillis().get(s);
            }
            n.memFree = v.freeMemoryMiB();
            for (int s = 0; n.memSocketFree != null && s < n.memSocketFree.length
                    && s < v.freeSocketMemoryMiB().size(); s++) {
                n.memSocketFree[s] = v.freeSocketMemoryMiB().get(s);
            }
            n.refreshForeign();
            n.healthy = v.healthy();
            n.eligible = v.eligible();
            inv.insert(n);
        }
        return inv;
    }

    // ------------------------------------------------------------------ mutation (ClusterState)

    /** Registers (or re-registers) a node, rebuilding its free capacity from the allocations live on it. */
    public void put(NodeSpec spec, boolean healthy, List<Holding> live) {
        remove(spec.nodeId());
        Node n = new Node(spec);
        n.healthy = healthy;
        n.eligible = healthy && backend.equals(spec.backend());
        for (Holding h : live) {
            apply(n, h.jobId(), h.task(), true);
        }
        n.refreshForeign();
        insert(n);
    }

    public void setHealthy(String nodeId, boolean healthy) {
        Node n = nodes.get(nodeId);
        if (n == null || n.healthy == healthy) {
            return;
        }
        detach(n);
        n.healthy = healthy;
        n.eligible = healthy && backend.equals(n.spec.backend());
        attach(n);
    }

    /**
     * Takes the node out of the search for the decision under way (cordoned, or reserved for another gang): it
     * counts as ineligible, so every counter, bucket and the placers skip it. Always undone with {@link #unblock}
     * before the decision returns; at most once per node.
     */
    void block(String nodeId) {
        Node n = nodes.get(nodeId);
        if (n != null && n.eligible && !n.blocked) {
            detach(n);
            n.eligible = false;
            n.blocked = true;
        }
    }

    void unblock(String nodeId) {
        Node n = nodes.get(nodeId);
        if (n != null && n.blocked) {
            n.blocked = false;
            n.eligible = true;
            attach(n);
        }
    }

    public void take(String jobId, PlacedTask p) {
        Node n = nodes.get(p.nodeId());
        if (n != null) {
            detach(n);
            apply(n, jobId, p, true);
            attach(n);
        }
    }

    /** Gives back what {@code jobId} held with {@code p} (the job id tells identical shares of two jobs apart). */
    public void give(String jobId, PlacedTask p) {
        Node n = nodes.get(p.nodeId());
        if (n != null) {
            detach(n);
            apply(n, jobId, p, false);
            attach(n);
        }
    }

    private void apply(Node n, String jobId, PlacedTask p, boolean take) {
        for (GpuShare s : p.gpuShares()) {
            int pos = n.pos(s.index());
            if (pos >= 0) {
                shareOn(n, pos, jobId, s, take);
            }
        }
        for (int index : p.gpuIndices()) {
            int pos = n.pos(index);
            if (pos >= 0) {
                if (take) {
                    n.free &= ~(1L << pos);
                    n.foreignMask &= ~(1L << pos); // read back at restore: Gantry's holder wins, refreshed below
                } else {
                    n.free |= (1L << pos) & ~n.cordonedMask;
                }
                n.holder[pos] = take ? jobId : null;
            }
        }
        int socket = p.socket(n.spec);
        n.cpuFree[socket] += take ? -p.cpuMillis() : p.cpuMillis();
        n.takeMem(socket, take ? p.memoryMiB() : -p.memoryMiB());
        n.refreshForeign();
    }

    /** The MIG slots a share covers on a device (all 8 when its profile is unknown here: never double-booked). */
    int slotsOf(Node n, int pos, GpuShare s) {
        if (!s.isMig()) {
            return 0;
        }
        MigProfile profile = sharing.mig().profile(n.spec.gpus().get(pos), s.migProfile());
        return profile == null ? (1 << MigProfile.SLOTS) - 1 : s.slotMask(profile);
    }

    /** Takes or gives back one share of device {@code pos}; the device leaves the whole-free mask while shared. */
    private void shareOn(Node n, int pos, String jobId, GpuShare s, boolean take) {
        int slots = slotsOf(n, pos, s);
        if (take) {
            shareDelta(n, pos, s.milli(), s.memoryMiB(), slots);
            n.shareHolders(pos).add(new ShareHolder(jobId, s));
            sharedNodes.add(n);
        } else {
            List<ShareHolder> holders = n.shareHolders(pos);
            for (int i = 0; i < holders.size(); i++) {
                if (holders.get(i).share().equals(s) && java.util.Objects.equals(holders.get(i).jobId(), jobId)) {
                    holders.remove(i);
                    shareUndo(n, pos, s.milli(), s.memoryMiB(), slots);
                    break;
                }
            }
            boolean any = false;
            for (int c : n.shareCount) {
                any |= c > 0;
            }
            if (!any) {
                sharedNodes.remove(n);
            }
        }
    }

    private static void shareDelta(Node n, int pos, int milli, long mem, int slots) {
        if (n.shareCount[pos]++ == 0) {
            n.free &= ~(1L << pos);
            n.foreignMask &= ~(1L << pos);
        }
        n.shareMilli[pos] += milli;
        n.shareMem[pos] += mem;
        n.migSlots[pos] |= slots;
    }

    private static void shareUndo(Node n, int pos, int milli, long mem, int slots) {
        n.shareMilli[pos] -= milli;
        n.shareMem[pos] -= mem;
        n.migSlots[pos] &= ~slots;
        if (--n.shareCount[pos] == 0) {
            n.free |= (1L << pos) & ~n.cordonedMask;
            n.shareMilli[pos] = 0;
            n.shareMem[pos] = 0;
            n.migSlots[pos] = 0;
        }
    }

    /** A placer's trial share: no holder bookkeeping, undone with {@link #untakeShare}. */
    void takeShare(Node n, int pos, int milli, long gpuMem, int slots, int socket, int cpu, long mem) {
        detach(n, false);
        shareDelta(n, pos, milli, gpuMem, slots);
        n.cpuFree[socket] -= cpu;
        n.takeMem(socket, mem);
        attach(n, false);
    }

    void untakeShare(Node n, int pos, int milli, long gpuMem, int slots, int socket, int cpu, long mem) {
        detach(n, false);
        shareUndo(n, pos, milli, gpuMem, slots);
        n.cpuFree[socket] += cpu;
        n.takeMem(socket, -mem);
        attach(n, false);
    }

    public GpuSharing sharing() {
        return sharing;
    }

    /** Whether a share may go on this device: it exists and is not held whole (used to check a placer's answer). */
    boolean canShare(String nodeId, int gpuIndex) {
        Node n = nodes.get(nodeId);
        if (n == null) {
            return false;
        }
        int pos = n.pos(gpuIndex);
        return pos >= 0 && (n.cordonedMask & (1L << pos)) == 0
                && ((n.free & (1L << pos)) != 0 || n.shareCount[pos] > 0);
    }

    /** A placer's trial step: no holder bookkeeping, undone with {@link #untake}. */
    void takeRaw(Node n, long mask, int socket, int cpu, long mem) {
        detach(n, false);
        n.free &= ~mask;
        n.cpuFree[socket] -= cpu;
        n.takeMem(socket, mem);
        attach(n, false);
    }

    void untake(Node n, long mask, int socket, int cpu, long mem) {
        detach(n, false);
        n.free |= mask;
        n.cpuFree[socket] += cpu;
        n.takeMem(socket, -mem);
        attach(n, false);
    }

    private void remove(String nodeId) {
        Node old = nodes.remove(nodeId);
        if (old != null) {
            detach(old);
            old.rack.nodes.remove(nodeId);
        }
    }

    private void insert(Node n) {
        n.modelIds = new int[n.modelMasks.size()];
        n.modelMaskArray = new long[n.modelMasks.size()];
        int m = 0;
        for (Map.Entry<String, Long> e : n.modelMasks.entrySet()) {
            n.modelIds[m] = modelId(e.getKey());
            n.modelMaskArray[m++] = e.getValue();
        }
        nodes.put(n.id, n);
        Spine spine = spines.computeIfAbsent(n.spec.spine(), Spine::new);
        String key = n.spec.spine() + "/" + n.spec.rack();
        Rack rack = racks.computeIfAbsent(key, k -> new Rack(k, n.spec.rack(), spine));
        spine.racks.put(key, rack);
        rack.nodes.put(n.id, n);
        n.rack = rack;
        attach(n);
    }

    /** The id of a GPU model some node registered, or -1 when none has. */
    int knownModelId(String model) {
        Integer id = modelIds.get(model);
        return id == null ? -1 : id;
    }

    private int modelId(String model) {
        Integer id = modelIds.get(model);
        if (id != null) {
            return id;
        }
        int next = modelNames.size();
        modelIds.put(model, next);
        modelNames.add(model);
        if (next >= modelFree.length) {
            modelFree = java.util.Arrays.copyOf(modelFree, next * 2);
            modelNodesByFree = java.util.Arrays.copyOf(modelNodesByFree, next * 2);
        }
        modelNodesByFree[next] = new int[NodeSpec.MAX_GPUS + 1];
        return next;
    }

    private void detach(Node n) {
        detach(n, true);
    }

    private void attach(Node n) {
        attach(n, true);
        touched.add(n.id);
    }

    /**
     * The nodes changed since {@link #forgetTouched} (registered, health, holdings; a placer's trial steps excluded):
     * every other node is as it was then, so a one-replica gang that fitted none of them then fits none now.
     */
    private final Set<String> touched = new java.util.LinkedHashSet<>(); // cheap to iterate after a clear

    Set<String> touched() {
        return java.util.Collections.unmodifiableSet(touched);
    }

    void forgetTouched() {
        touched.clear();
    }

    /** The node with this id, or null. */
    Node node(String nodeId) {
        return nodes.get(nodeId);
    }

    /**
     * {@code buckets = false} for a placer's trial steps: the counters follow, the free-count buckets do not (a
     * placer iterates them while it tries; every trial is undone before it returns, so membership stays right).
     */
    private void detach(Node n, boolean buckets) {
        if (n.eligible) {
            for (int k = 0; k < n.modelIds.length; k++) {
                int f = Long.bitCount(n.free & n.modelMaskArray[k]);
                modelFree[n.modelIds[k]] -= f;
                modelNodesByFree[n.modelIds[k]][f]--;
            }
            int free = n.freeCount();
            if (buckets) {
                byFree[free].remove(n);
            }
            n.rack.free -= free;
            n.rack.total -= n.count;
            n.rack.spine.free -= free;
            n.rack.spine.total -= n.count;
            eligibleFree -= free;
            eligibleGpus -= n.count;
            eligibleNodes--;
        }
    }

    private void attach(Node n, boolean buckets) {
        if (n.eligible) {
            for (int k = 0; k < n.modelIds.length; k++) {
                int f = Long.bitCount(n.free & n.modelMaskArray[k]);
                modelFree[n.modelIds[k]] += f;
                modelNodesByFree[n.modelIds[k]][f]++;
            }
            int free = n.freeCount();
            if (buckets) {
                byFree[free].add(n);
            }
            n.rack.free += free;
            n.rack.total += n.count;
            n.rack.spine.free += free;
            n.rack.spine.total += n.count;
            eligibleFree += free;
            eligibleGpus += n.count;
            eligibleNodes++;
        }
    }

    // ------------------------------------------------------------------ reads

    public String backend() {
        return backend;
    }

    public int eligibleGpus() {
        return eligibleGpus;
    }

    public int eligibleFreeGpus() {
        return eligibleFree;
    }

    public int eligibleNodes() {
        return eligibleNodes;
    }

    public int nodeCount() {
        return nodes.size();
    }

    public boolean knows(String nodeId) {
        return nodes.containsKey(nodeId);
    }

    /** Whether every GPU index exists on the node and is free (used to check a placer's answer). */
    boolean isFree(String nodeId, int gpuIndex) {
        Node n = nodes.get(nodeId);
        if (n == null) {
            return false;
        }
        int pos = n.pos(gpuIndex);
        return pos >= 0 && (n.free & (1L << pos)) != 0;
    }

    /** Whole GPUs free on the node (0 for an unknown one). */
    public int freeGpus(String nodeId) {
        Node n = nodes.get(nodeId);
        return n == null ? 0 : n.freeCount();
    }

    boolean isEligible(String nodeId) {
        Node n = nodes.get(nodeId);
        return n != null && n.eligible;
    }

    Iterable<Node> nodes() {
        return nodes.values();
    }

    Iterable<Rack> racks() {
        return racks.values();
    }

    Iterable<Spine> spines() {
        return spines.values();
    }

    /** Eligible nodes with at least {@code min} free GPUs, fullest first ({@code descending}: emptiest first). */
    Iterable<Node> byFree(int min, boolean descending) {
        List<TreeSet<Node>> buckets = new ArrayList<>();
        for (int f = Math.max(0, min); f < byFree.length; f++) {
            if (!byFree[f].isEmpty()) {
                buckets.add(byFree[f]);
            }
        }
        if (descending) {
            java.util.Collections.reverse(buckets);
        }
        // not stream().flatMap(): its iterator buffers a whole bucket before handing out the first node
        return () -> new java.util.Iterator<>() {
            private int bucket;
            private java.util.Iterator<Node> current = java.util.Collections.emptyIterator();

            @Override
            public boolean hasNext() {
                while (!current.hasNext() && bucket < buckets.size()) {
                    current = buckets.get(bucket++).iterator();
                }
                return current.hasNext();
            }

            @Override
            public Node next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                return current.next();
            }
        };
    }

    /**
     * Per GPU model of the eligible nodes (by name): free whole GPUs and the most free on one node. O(models x 65)
     * from counters kept on every change.
     */
    public List<FreeCapacity> freeCapacity() {
        List<FreeCapacity> out = new ArrayList<>();
        // the most CPU (one socket) and memory next to a GPU of each model that is free, or has a free share
        long[] cpuNext = new long[modelNames.size()];
        long[] memNext = new long[modelNames.size()];
        java.util.Arrays.fill(cpuNext, 0);
        for (int f = 1; f < byFree.length; f++) {
            for (Node n : byFree[f]) {
                besideFree(n, n.free, cpuNext, memNext);
            }
        }
        for (Node n : sharedNodes) {
            if (n.eligible) {
                long roomy = 0;
                for (int pos = 0; pos < n.count; pos++) {
                    if (n.shareCount[pos] > 0 && n.migSlots[pos] == 0 && n.shareMilli[pos] < sharing.milliCapacity()) {
                        roomy |= 1L << pos;
                    }
                }
                besideFree(n, roomy, cpuNext, memNext);
            }
        }
        for (int id = 0; id < modelNames.size(); id++) {
            int[] hist = modelNodesByFree[id];
            int largest = -1;
            for (int f = hist.length - 1; f >= 0; f--) {
                if (hist[f] > 0) {
                    largest = f;
                    break;
                }
            }
            if (largest >= 0) {
                List<Integer> counts = new ArrayList<>(largest + 1);
                for (int f = 0; f <= largest; f++) {
                    counts.add(hist[f]);
                }
                out.add(new FreeCapacity(modelNames.get(id), modelFree[id], largest, counts,
                        modelFree[id] > 0 ? 1000 : largestFreeShare(modelNames.get(id)), cpuNext[id], memNext[id]));
            }
        }
        out.sort(java.util.Comparator.comparing(FreeCapacity::gpuModel));
        return out;
    }

    private void besideFree(Node n, long gpus, long[] cpuNext, long[] memNext) {
        if (gpus == 0) {
            return;
        }
        for (int i = 0; i < n.modelIds.length; i++) {
            long mask = gpus & n.modelMaskArray[i];
            if (mask == 0) {
                continue;
            }
            int id = n.modelIds[i];
            for (int s = 0; s < n.socketMasks.length; s++) {
                if ((mask & n.socketMasks[s]) != 0) {
                    cpuNext[id] = Math.max(cpuNext[id], n.cpuFree[s]);
                    memNext[id] = Math.max(memNext[id], n.memSocketFree == null ? n.memFree : n.memSocketFree[s]);
                }
            }
        }
    }

    /**
     * What an eligible node has free: whole GPUs, the free thousandths of each device that fractions share (MIG
     * excluded), CPU millicores and memory; null for an unknown or ineligible node.
     */
    public ClusterState.Room roomOn(String nodeId) {
        Node n = nodes.get(nodeId);
        if (n == null || !n.eligible) {
            return null;
        }
        List<Integer> parts = new ArrayList<>();
        for (int pos = 0; pos < n.count; pos++) {
            if (n.shareCount[pos] > 0 && n.migSlots[pos] == 0 && n.shareMilli[pos] < sharing.milliCapacity()) {
                parts.add(Math.min(999, sharing.milliCapacity() - n.shareMilli[pos]));
            }
        }
        long cpu = 0;
        for (int c : n.cpuFree) {
            cpu += c;
        }
        return new ClusterState.Room(n.id, Long.bitCount(n.free), parts, cpu, n.memFree);
    }

    /**
     * The most thousandths free on one fraction-shared device of {@code model} on an eligible node (MIG-partitioned
     * devices excluded), 0 if none: O(shared devices), only asked when no whole GPU of the model is free.
     */
    private int largestFreeShare(String model) {
        int best = 0;
        for (Node n : sharedNodes) {
            if (!n.eligible) {
                continue;
            }
            for (int pos = 0; pos < n.count; pos++) {
                if (n.shareCount[pos] > 0 && n.migSlots[pos] == 0 && n.spec.gpus().get(pos).model().equals(model)) {
                    best = Math.max(best, Math.min(999, sharing.milliCapacity() - n.shareMilli[pos]));
                }
            }
        }
        return Math.max(0, best);
    }

    /** The most free GPUs on one eligible node. */
    int maxNodeFree() {
        for (int f = byFree.length - 1; f > 0; f--) {
            if (!byFree[f].isEmpty()) {
                return f;
            }
        }
        return 0;
    }

    public InventorySnapshot snapshot() {
        List<NodeView> views = new ArrayList<>(nodes.size());
        for (Node n : nodes.values()) {
            TreeMap<Integer, String> held = new TreeMap<>();
            for (int pos = 0; pos < n.count; pos++) {
                if (n.holder[pos] != null) {
                    held.put(n.index[pos], n.holder[pos]);
                }
            }
            List<Integer> cpu = new ArrayList<>();
            int total = 0;
            for (int c : n.cpuFree) {
                cpu.add(c);
                total += c;
            }
            TreeMap<Integer, List<ShareHolder>> shares = new TreeMap<>();
            for (int pos = 0; pos < n.count; pos++) {
                if (n.shareCount[pos] > 0) {
                    List<ShareHolder> h = new ArrayList<>(n.shareHolders(pos));
                    h.sort(java.util.Comparator.comparing((ShareHolder x) -> x.jobId())
                            .thenComparing(x -> x.share().toString()));
                    shares.put(n.index[pos], h);
                }
            }
            List<Long> socketMem = null;
            if (n.memSocketFree != null) {
                socketMem = new ArrayList<>();
                for (long v : n.memSocketFree) {
                    socketMem.add(v);
                }
            }
            java.util.TreeSet<Integer> foreign = new java.util.TreeSet<>();
            for (int pos = 0; pos < n.count; pos++) {
                if ((n.foreignMask & (1L << pos)) != 0) {
                    foreign.add(n.index[pos]);
                }
            }
            views.add(new NodeView(n.spec, n.healthy, n.eligible, held, total, n.memFree, cpu, shares, socketMem,
                    foreign));
        }
        return new InventorySnapshot(views);
    }

    /** Free and total GPUs of the eligible nodes of each rack, racks ordered by spine then rack. */
    public List<RackSummary> rackSummaries() {
        List<RackSummary> out = new ArrayList<>();
        for (Rack r : racks.values()) {
            int eligible = (int) r.nodes.values().stream().filter(n -> n.eligible).count();
            out.add(new RackSummary(r.spine.name, r.name, r.nodes.size(), eligible, r.total, r.free));
        }
        return out;
    }

    public record RackSummary(String spine, String rack, int nodes, int eligibleNodes, int gpus, int freeGpus) {
    }

    /**
     * Fragmentation after the FGD paper (Weng et al., ATC'23), for whole GPUs: for a typical request of {@code k}
     * GPUs, the free GPUs of an eligible node are stranded when the node cannot host {@code k} GPUs of one model
     * (it has fewer free of any single model). The metric is the stranded share of all free GPUs, averaged over
     * the typical request sizes; 0 when nothing is free.
     */
    public double fragmentation(List<Integer> typicalRequests) {
        if (eligibleFree == 0 || typicalRequests.isEmpty()) {
            return 0.0;
        }
        double sum = 0;
        for (int k : typicalRequests) {
            long stranded = 0;
            for (int f = 1; f < byFree.length; f++) {
                for (Node n : byFree[f]) {
                    if (n.maxFreeOneModel() < k) {
                        stranded += f;
                    }
                }
            }
            sum += (double) stranded / eligibleFree;
        }
        return sum / typicalRequests.size();
    }

    // ------------------------------------------------------------------ the index

    static final class Node {
        final NodeSpec spec;
        final String id;
        final int count;
        final int[] index;
        final int[] numa;
        final String[] holder;
        final Map<String, Long> modelMasks = new LinkedHashMap<>();
        final long[] nvlinkMasks;
        final long[] pcieMasks;
        final long[] socketMasks;
        final int[] cpuFree;
        /** Per device: shares held, their thousandths, GPU memory and MIG slots; 0 for a device not shared. */
        final int[] shareCount;
        final int[] shareMilli;
        final long[] shareMem;
        final int[] migSlots;
        private final List<ShareHolder>[] shareHolders;
        long free;
        long memFree;
        /** Free memory per NUMA socket, or null when the node registers memory per node only. */
        long[] memSocketFree;
        boolean healthy;
        boolean eligible;
        /** Out of the search for the decision under way (see {@link Inventory#block}). */
        boolean blocked;
        /** GPUs with an RDMA NIC on their PCIe switch (GPUDirect RDMA without crossing a socket). */
        final long nicMask;
        /** GPUs cordoned after a fault (the spec's control label): never free, never shared, whatever is released. */
        final long cordonedMask;
        /** How many GPUs workloads outside Gantry hold here (the spec's control label). */
        final int foreignWanted;
        /**
         * The GPUs counted as held outside Gantry: the highest-numbered {@code foreignWanted} of those neither held
         * by Gantry nor cordoned (a backend reports a count, not devices). Recomputed after every change of the node,
         * so it is a function of the node's holders alone and a rebuilt index equals the incremental one.
         */
        long foreignMask;
        Rack rack;
        /** The inventory's ids of this node's models and their masks, in the order of {@code modelMasks}. */
        int[] modelIds = new int[0];
        long[] modelMaskArray = new long[0];

        /** The node's GPUs of the model with inventory id {@code modelId}, 0 when it has none. */
        long maskOf(int modelId) {
            for (int i = 0; i < modelIds.length; i++) {
                if (modelIds[i] == modelId) {
                    return modelMaskArray[i];
                }
            }
            return 0L;
        }

        Node(NodeSpec spec) {
            this.spec = spec;
            this.id = spec.nodeId();
            this.count = spec.gpus().size();
            this.index = new int[count];
            this.numa = new int[count];
            this.holder = new String[count];
            this.shareCount = new int[count];
            this.shareMilli = new int[count];
            this.shareMem = new long[count];
            this.migSlots = new int[count];
            @SuppressWarnings("unchecked")
            List<ShareHolder>[] lists = new List[count];
            this.shareHolders = lists;
            TreeMap<String, Long> models = new TreeMap<>();
            TreeMap<Integer, Long> nvl = new TreeMap<>();
            TreeMap<Integer, Long> pcie = new TreeMap<>();
            this.socketMasks = new long[spec.sockets()];
            for (int pos = 0; pos < count; pos++) {
                Gpu g = spec.gpus().get(pos);
                long bit = 1L << pos;
                index[pos] = g.index();
                numa[pos] = g.numaNode();
                models.merge(g.model(), bit, (a, b) -> a | b);
                if (g.nvlinkDomain() != Gpu.NO_NVLINK) {
                    nvl.merge(g.nvlinkDomain(), bit, (a, b) -> a | b);
                }
                pcie.merge(g.pcieSwitch(), bit, (a, b) -> a | b);
                socketMasks[g.numaNode()] |= bit;
            }
            modelMasks.putAll(models);
            long nics = 0;
            for (int pos = 0; pos < count; pos++) {
                int sw = spec.gpus().get(pos).pcieSwitch();
                if (spec.rdmaNics().stream().anyMatch(nic -> nic.pcieSwitch() == sw)) {
                    nics |= 1L << pos;
                }
            }
            nicMask = nics;
            nvlinkMasks = nvl.values().stream().mapToLong(Long::longValue).toArray();
            pcieMasks = pcie.values().stream().mapToLong(Long::longValue).toArray();
            long cordonedGpus = 0;
            java.util.Set<Integer> cordonedIndices = spec.cordonedGpus();
            for (int pos = 0; pos < count; pos++) {
                if (cordonedIndices.contains(index[pos])) {
                    cordonedGpus |= 1L << pos;
                }
            }
            cordonedMask = cordonedGpus;
            free = (count == 64 ? -1L : (1L << count) - 1) & ~cordonedMask;
            foreignWanted = spec.foreignGpus();
            refreshForeign();
            cpuFree = new int[spec.sockets()];
            for (int s = 0; s < cpuFree.length; s++) {
                cpuFree[s] = spec.socketCpuMillis(s);
            }
            memFree = spec.memoryMiB();
            if (spec.memoryPerSocket()) {
                memSocketFree = new long[spec.sockets()];
                for (int s = 0; s < memSocketFree.length; s++) {
                    memSocketFree[s] = spec.socketMemoryMiB(s);
                }
            }
        }

        /** Whether a task of {@code mem} MiB could take its memory on socket {@code s} (or anywhere on the node). */
        boolean memOn(int s, long mem) {
            return memSocketFree == null ? memFree >= mem : memSocketFree[s] >= mem;
        }

        void takeMem(int s, long mem) {
            memFree -= mem;
            if (memSocketFree != null) {
                memSocketFree[s] -= mem;
            }
        }

        /** The most free memory on one socket (the node's when memory is not per socket). */
        long maxSocketMemFree() {
            if (memSocketFree == null) {
                return memFree;
            }
            long m = 0;
            for (long v : memSocketFree) {
                m = Math.max(m, v);
            }
            return m;
        }

        int freeCount() {
            return Long.bitCount(free);
        }

        /**
         * Takes the highest-numbered {@code foreignWanted} GPUs of those not held by Gantry off the free mask (all of
         * them when fewer: Gantry's own holders are never displaced). Callers bracket it with detach / attach.
         */
        void refreshForeign() {
            long pool = free | foreignMask;
            long taken = 0;
            for (int k = 0; k < foreignWanted && pool != 0; k++) {
                long top = Long.highestOneBit(pool);
                taken |= top;
                pool &= ~top;
            }
            foreignMask = taken;
            free = pool;
        }

        List<ShareHolder> shareHolders(int pos) {
            if (shareHolders[pos] == null) {
                shareHolders[pos] = new ArrayList<>(2);
            }
            return shareHolders[pos];
        }

        int pos(int gpuIndex) {
            int pos = java.util.Arrays.binarySearch(index, gpuIndex);
            return pos >= 0 ? pos : -1;
        }

        int maxCpuFree() {
            int max = Integer.MIN_VALUE;
            for (int c : cpuFree) {
                max = Math.max(max, c);
            }
            return max;
        }

        int maxFreeOneModel() {
            if (modelMasks.size() == 1) {
                return freeCount();
            }
            int max = 0;
            for (long m : modelMasks.values()) {
                max = Math.max(max, Long.bitCount(free & m));
            }
            return max;
        }

        int maxSocketCapacity() {
            int max = 0;
            for (int s = 0; s < cpuFree.length; s++) {
                max = Math.max(max, spec.socketCpuMillis(s));
            }
            return max;
        }
    }

    static final class Rack {
        final String key;
        final String name;
        final Spine spine;
        final TreeMap<String, Node> nodes = new TreeMap<>();
        int free;
        int total;

        Rack(String key, String name, Spine spine) {
            this.key = key;
            this.name = name;
            this.spine = spine;
        }
    }

    static final class Spine {
        final String name;
        final TreeMap<String, Rack> racks = new TreeMap<>();
        int free;
        int total;

        Spine(String name) {
            this.name = name;
        }
    }
}
