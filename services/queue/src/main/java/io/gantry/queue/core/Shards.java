package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which shard of a queue split by cohort tree ({@code gantry.queue.shards}) owns a tenant's jobs. A cohort tree is a
 * root cohort with every cohort and queue under it, or a queue in no cohort; quota is lent and borrowed only inside a
 * tree, so one owner per tree decides alone. A tenant with queues in two trees joins them into one group (its jobs
 * may depend on each other, and its budgets hold all of them), so the unit of ownership is a group of trees linked
 * by tenants; its name is the smallest of its trees' names ({@code cohort:<root>} or {@code queue:<name>}), and its
 * shard is that name's {@link String#hashCode} modulo the shard count: stable while the group keeps its name, and
 * the same in every instance, unless the configuration pins one of the group's trees to a shard ({@code shard:} of
 * a root cohort or of a queue in no cohort): an operator balances the shards so. Without a configuration file each
 * tenant's implicit queue is a tree of its own. A tenant no queue belongs to has shard 0, the shard that also answers
 * what concerns no tenant. Pins that cannot hold (a shard the split does not have, two trees a tenant joins pinned
 * apart) are {@link #problems}: a configuration with any is refused; until then such a group goes by its hash.
 */
public final class Shards {
    private final int count;
    private final boolean implicit;
    /** Tenant to the name of its group of trees (configured tenants only). */
    private final Map<String, String> groupOf;
    /** Queue name to its tenant (configured queues only). */
    private final Map<String, String> tenantOfQueue;
    /** Group name to the shard its pinned trees name (split only; groups whose pins cannot hold are left out). */
    private final Map<String, Integer> pinOfGroup;
    /** Why the configuration's pins cannot hold, one sentence each. */
    private final List<String> problems;

    private Shards(int count, boolean implicit, Map<String, String> groupOf, Map<String, String> tenantOfQueue,
                   Map<String, Integer> pinOfGroup, List<String> problems) {
        this.count = count;
        this.implicit = implicit;
        this.groupOf = groupOf;
        this.tenantOfQueue = tenantOfQueue;
        this.pinOfGroup = pinOfGroup;
        this.problems = List.copyOf(problems);
    }

    /** The shards of {@code config} split {@code count} ways (1: not split, everything is shard 0). */
    public static Shards of(FairShareConfig config, int count) {
        Objects.requireNonNull(config, "config");
        if (count < 1) {
            throw new IllegalArgumentException("shards: at least 1, was " + count);
        }
        if (config.isImplicit()) {
            return new Shards(count, true, Map.of(), Map.of(), Map.of(), List.of());
        }
        // union-find over trees; a tenant links the trees of its queues
        Map<String, String> parent = new HashMap<>();
        Map<String, String> firstTreeOf = new HashMap<>();
        Map<String, String> tenantOfQueue = new HashMap<>();
        for (FairShareConfig.QueueDef q : config.queues()) {
            tenantOfQueue.put(q.name(), q.tenant());
            String tree = treeOf(config, q);
            parent.putIfAbsent(tree, tree);
            String other = firstTreeOf.putIfAbsent(q.tenant(), tree);
            if (other != null) {
                union(parent, other, tree);
            }
        }
        Map<String, String> groupOf = new TreeMap<>();
        firstTreeOf.forEach((tenant, tree) -> groupOf.put(tenant, find(parent, tree)));
        Map<String, Integer> pinOfGroup = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        if (count > 1) {
            pins(config, count, parent, groupOf, pinOfGroup, problems);
        }
        return new Shards(count, false, groupOf, tenantOfQueue, pinOfGroup, problems);
    }

    /** The shard of each group with a pinned tree, and why pins cannot hold (split into {@code count} shards). */
    private static void pins(FairShareConfig config, int count, Map<String, String> parent,
                             Map<String, String> groupOf, Map<String, Integer> pinOfGroup, List<String> problems) {
        Map<String, String> pinnedTreeOfGroup = new HashMap<>();
        java.util.Set<String> conflicting = new java.util.HashSet<>();
        for (Map.Entry<String, Integer> pin : config.shardPins().entrySet()) {
            String tree = pin.getKey();
            int shard = pin.getValue();
            if (shard >= count) {
                problems.add("queues: " + tree + " is pinned to shard " + shard + ", and the queue is split into "
                        + count + " shards (gantry.queue.shards): shards 0 to " + (count - 1));
                continue;
            }
            if (!parent.containsKey(tree)) {
                continue; // a root cohort without queues: nothing of it to own
            }
            String group = find(parent, tree);
            Integer before = pinOfGroup.putIfAbsent(group, shard);
            if (before != null && before != shard && conflicting.add(group)) {
                String other = pinnedTreeOfGroup.get(group);
                TreeSet<String> tenants = new TreeSet<>();
                groupOf.forEach((tenant, g) -> {
                    if (g.equals(group)) {
                        tenants.add(tenant);
                    }
                });
                problems.add("queues: cohort trees " + other + " and " + tree + " share tenants ("
                        + String.join(", ", tenants) + ") and so one shard, but are pinned to shards " + before
                        + " and " + shard);
            }
            pinnedTreeOfGroup.putIfAbsent(group, tree);
        }
        conflicting.forEach(pinOfGroup::remove);
    }

    /** The tree of a queue: {@code cohort:<root cohort>}, or {@code queue:<name>} for a queue in no cohort. */
    static String treeOf(FairShareConfig config, FairShareConfig.QueueDef q) {
        if (q.cohort() == null) {
            return "queue:" + q.name();
        }
        String c = q.cohort();
        for (int guard = 0; config.cohorts().get(c) != null && guard <= config.cohorts().size(); guard++) {
            c = config.cohorts().get(c);
        }
        return "cohort:" + c;
    }

    private static String find(Map<String, String> parent, String x) {
        while (!parent.get(x).equals(x)) {
            x = parent.get(x);
        }
        return x;
    }

    /** Joins two groups under the smaller name, so a group is always named after its smallest tree. */
    private static void union(Map<String, String> parent, String a, String b) {
        String ra = find(parent, a);
        String rb = find(parent, b);
        if (ra.compareTo(rb) < 0) {
            parent.put(rb, ra);
        } else if (rb.compareTo(ra) < 0) {
            parent.put(ra, rb);
        }
    }

    public int count() {
        return count;
    }

    /** Whether there is more than one shard. */
    public boolean split() {
        return count > 1;
    }

    /** The group of trees a tenant's jobs belong to; null for a tenant no configured queue belongs to. */
    public String groupOf(String tenant) {
        return implicit ? "queue:" + tenant : groupOf.get(tenant);
    }

    /** The shard owning {@code tenant}'s jobs. */
    public int ofTenant(String tenant) {
        String group = groupOf(tenant);
        if (group == null) {
            return 0;
        }
        Integer pinned = pinOfGroup.get(group);
        return pinned != null ? pinned : Math.floorMod(group.hashCode(), count);
    }

    /**
     * Why the configuration's pins cannot hold under this split, one sentence each (a configuration with any is
     * refused); empty when not split, whatever the pins say (they wait for a split).
     */
    public List<String> problems() {
        return problems;
    }

    /** The shard owning the jobs of queue {@code name}: its tenant's (an implicit queue is named after its tenant). */
    public int ofQueue(String name) {
        return ofTenant(implicit ? name : tenantOfQueue.getOrDefault(name, ""));
    }

    /**
     * Why a split queue refuses a configuration whose shards are {@code after}: its pins cannot hold, or, going from
     * {@code before} (null: nothing was live, so nothing moves), it moves a tenant to another shard.
     */
    public static List<String> refusals(Shards before, Shards after) {
        List<String> out = new ArrayList<>(after.problems());
        if (before != null) {
            out.addAll(before.moves(after));
        }
        return out;
    }

    /**
     * Why going from these shards to {@code next} must be refused: one sentence per tenant whose jobs would change
     * shard (its jobs, usage and holds live in one shard's state, which a running service does not hand over),
     * leaving included (a tenant without a queue is shard 0's). Empty when no tenant moves (new tenants take their
     * place on their own; an implicit configuration has every tenant, each its own tree).
     */
    public List<String> moves(Shards next) {
        Objects.requireNonNull(next, "next");
        List<String> problems = new ArrayList<>();
        if (implicit && next.implicit || next.count != count) {
            return problems;
        }
        // an implicit configuration has every tenant: then the other one's tenants are those both have
        TreeSet<String> tenants = new TreeSet<>(groupOf.keySet());
        tenants.addAll(next.groupOf.keySet());
        for (String tenant : tenants) {
            if (groupOf(tenant) == null) {
                continue; // new: no state anywhere yet
            }
            // a tenant that leaves goes to shard 0 with what is left of it (late events, cancellations)
            int from = ofTenant(tenant);
            int to = next.ofTenant(tenant);
            if (from != to) {
                String where = next.groupOf(tenant) == null ? "no queue left" : next.groupOf(tenant);
                problems.add("queues: tenant " + tenant + " would move from shard " + from + " (" + groupOf(tenant)
                        + ") to shard " + to + " (" + where + "); the queue is split into " + count
                        + " shards by cohort tree (gantry.queue.shards), and a running queue keeps each tenant on"
                        + " its shard: regroup the trees with the queue started once with gantry.queue.shards=1");
            }
        }
        return problems;
    }

    /**
     * Queues of {@code before} that {@code next} removes (or gives another tenant) whose tenant another shard than
     * {@code here} owns: {@code here} cannot count their jobs, so such a change needs the operator's word (the admin
     * API's force) after a look at the queue. Empty when not split.
     */
    public List<String> removedElsewhere(FairShareConfig before, FairShareConfig next, int here) {
        List<String> problems = new ArrayList<>();
        if (!split() || before.isImplicit()) {
            return problems;
        }
        for (FairShareConfig.QueueDef q : before.queues()) {
            int owner = ofTenant(q.tenant());
            if (owner != here && !next.hasQueue(q.tenant(), q.name())) {
                problems.add("queues: queue '" + q.name() + "' of tenant " + q.tenant() + " would be removed, and its"
                        + " jobs are counted by shard " + owner + ", not by shard " + here + " that applies"
                        + " configurations: once GET /v1/queues/" + q.name() + "/pending shows it empty, remove it"
                        + " through the admin API with force");
            }
        }
        return problems;
    }

    /**
     * A short digest of who owns what, for the snapshot format: a snapshot taken under another grouping (or shard
     * count) holds other tenants' state and is not read.
     */
    public String digest() {
        if (implicit) {
            return count + "/implicit";
        }
        // 64-bit FNV-1a over "tenant=shard" lines in tenant order
        long h = 0xcbf29ce484222325L;
        for (String tenant : new TreeSet<>(groupOf.keySet())) {
            for (char c : (tenant + "=" + ofTenant(tenant) + "\n").toCharArray()) {
                h = (h ^ c) * 0x100000001b3L;
            }
        }
        return count + "/" + Long.toHexString(h);
    }
}
