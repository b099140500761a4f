package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Queues, cohorts, resource flavours and priority classes: everything the fair-share queue is configured with.
 * Immutable: a new configuration is applied by {@link QueueCore#reconfigure}.
 *
 * <p>Resources are the GPU flavours (in configured order, which is the fungibility order), then {@link #CPU}
 * (millicores) and {@link #MEMORY} (MiB). GPU quotas are held in thousandths of a GPU, the unit every core shares
 * (a fraction or MIG slice is charged what it is); documents write them in GPUs, fractions allowed
 * ({@code nominal: 12.5}). The GPU flavour named {@link #ANY_GPU} stands for "any GPU model": every
 * GPU counts against it and assigning it does not pin the job to a model.
 *
 * @param flavours        GPU flavours in fungibility order
 * @param cohorts         cohort name to parent cohort name (null: a root)
 * @param queues          the queues in configured order
 * @param implicitQuotas  non-null only without a configuration file: every tenant gets an implicit queue named after
 *                        it with this GPU quota on {@link #ANY_GPU}, in no cohort
 * @param preemption      when running jobs may be preempted for pending ones
 * @param ordering        how jobs of equal priority are ordered inside a queue (a queue may choose its own policy)
 * @param flavourPools    GPU flavour to the placement pool that has it (a flavour not named: pool {@code default});
 *                        empty: one pool, the queue chooses none
 * @param maxDrain        how long a capacity reservation for a starving gang may wait for runs to end by themselves
 *                        before placement stops the ones in the way; null (the default): only wait
 * @param idleTimeout     idle reclamation for every queue that does not set its own: a run of an interactive job whose
 *                        GPUs stay idle this long is stopped (reason IDLE), warned at half of it; null (the default):
 *                        never
 * @param shardPins       cohort tree ({@code cohort:<root>} or {@code queue:<name>} of a queue in no cohort) to the
 *                        shard that owns it when the queue is split by cohort tree ({@code cohorts[].shard} of a root
 *                        cohort, {@code queues[].shard} of a queue in no cohort); a tree not named here goes to the
 *                        shard its name hashes to ({@link Shards})
 */
public record FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                              Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                              Duration starvationWait, Quotas implicitQuotas, Preemption preemption,
                              Ordering ordering, Duration maxDrain, Map<String, String> flavourPools,
                              Duration idleTimeout, Map<String, Integer> shardPins) {
    /**
     * The default {@link #maxDrain}: null, a drain only waits. A bound (placement then stops checkpointed runs in the
     * way) cuts the tail of waits but, measured on Philly, raises the average (docs/design/topology-placement.md,
     * "Bounding the drain").
     */
    public static final Duration DEFAULT_MAX_DRAIN = null;
    /**
     * The shortest idle timeout accepted: utilisation comes in windows (5 min by default), and the warning at half the
     * timeout must have a chance to come before the stop.
     */
    public static final Duration MIN_IDLE_TIMEOUT = Duration.ofMinutes(1);

    public static final String ANY_GPU = "gpu";
    public static final String CPU = "cpu";
    public static final String MEMORY = "memory";
    public static final String DEFAULT_CLASS = "normal";
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    /**
     * Quota of one resource in one queue (GPU flavours in thousandths of a GPU). {@code borrowingLimit}/
     * {@code lendingLimit} null = no limit.
     */
    public record ResourceQuota(long nominal, Long borrowingLimit, Long lendingLimit) {
    }

    /**
     * One queue: owned by {@code tenant}, in {@code cohort} (or none), with quotas per resource name; {@code ordering}
     * is its own policy inside the queue, or null for the configuration's; {@code idleTimeout} its own idle timeout,
     * null for the configuration's, {@link Duration#ZERO} for never (written {@code never}).
     */
    public record QueueDef(String name, String tenant, String cohort, double weight,
                           Map<String, ResourceQuota> quotas, OrderingPolicy ordering, Duration idleTimeout) {
        public QueueDef {
            quotas = Collections.unmodifiableMap(new LinkedHashMap<>(quotas));
        }

        public QueueDef(String name, String tenant, String cohort, double weight, Map<String, ResourceQuota> quotas,
                        OrderingPolicy ordering) {
            this(name, tenant, cohort, weight, quotas, ordering, null);
        }

        public QueueDef(String name, String tenant, String cohort, double weight, Map<String, ResourceQuota> quotas) {
            this(name, tenant, cohort, weight, quotas, null);
        }
    }

    /** How jobs of equal priority class and job priority are ordered inside a queue. */
    public enum OrderingPolicy {
        /** By submit time. */
        FIFO,
        /**
         * Least attained service first (Tiresias' discretised LAS): by service level, then submit time; a run that
         * reached a higher level than a waiting job of its queue may be preempted for it.
         */
        LAS
    }

    /**
     * The ordering inside queues (see docs/design/fair-share.md, "Attained-service order").
     *
     * @param policy       the queues' policy unless a queue or one of its cohorts names its own
     * @param levels       attained service (GPU-seconds over all of a job's runs) at which a job enters the next
     *                     service level, ascending; {@code levels.size() + 1} levels
     * @param promoteAfter a job waiting this long (since it was last queued) stands at the first level again; null:
     *                     never
     * @param preemptAfter attained service (GPU-seconds over all of a job's runs) a run's job must have received
     *                     before it is preempted by service level at all: the levels order the queue, this bounds how
     *                     often a run is stopped for that order (a gang passes a one-GPU-hour level within minutes,
     *                     and a stopped gang needs a whole node again); 0: as soon as it is at a higher level
     * @param cohorts      the policy a cohort names for its queues and those of the cohorts below it (the nearest
     *                     cohort that names one wins; a queue's own still wins over all)
     */
    public record Ordering(OrderingPolicy policy, List<Long> levels, Duration promoteAfter, long preemptAfter,
                           Map<String, OrderingPolicy> cohorts) {
        /**
         * The default {@link #preemptAfter}: 32 GPU-hours (simulator/RESULTS.md, "a floor under preemption by service
         * level").
         */
        public static final long DEFAULT_PREEMPT_AFTER = 32 * 3_600L;
        /**
         * Two levels split at one GPU-hour; a waiting job is promoted after 8 hours; a run is preempted by service
         * level only after 32 GPU-hours.
         */
        public static final Ordering DEFAULT = new Ordering(OrderingPolicy.LAS, List.of(3_600L), Duration.ofHours(8));
        /** First come, first served inside a queue. */
        public static final Ordering FIFO = new Ordering(OrderingPolicy.FIFO, DEFAULT.levels, DEFAULT.promoteAfter);

        public Ordering {
            Objects.requireNonNull(policy, "policy");
            levels = List.copyOf(levels);
            if (preemptAfter < 0) {
                throw new IllegalArgumentException("preemptAfter must be >= 0, was " + preemptAfter);
            }
            cohorts = Collections.unmodifiableMap(new TreeMap<>(cohorts));
        }

        /** No cohort names a policy of its own; the default {@link #preemptAfter}. */
        public Ordering(OrderingPolicy policy, List<Long> levels, Duration promoteAfter) {
            this(policy, levels, promoteAfter, DEFAULT_PREEMPT_AFTER);
        }

        /** No cohort names a policy of its own. */
        public Ordering(OrderingPolicy policy, List<Long> levels, Duration promoteAfter, long preemptAfter) {
            this(policy, levels, promoteAfter, preemptAfter, Map.of());
        }

        Ordering withCohorts(Map<String, OrderingPolicy> byCohort) {
            return new Ordering(policy, levels, promoteAfter, preemptAfter, byCohort);
        }
    }

    /** The ordering policy of {@code queue}: its own, else its nearest cohort's that names one, else the global one. */
    public OrderingPolicy orderingOf(QueueDef queue) {
        if (queue.ordering() != null) {
            return queue.ordering();
        }
        Set<String> seen = new HashSet<>();
        for (String c = queue.cohort(); c != null && seen.add(c); c = cohorts.get(c)) {
            OrderingPolicy p = ordering.cohorts().get(c);
            if (p != null) {
                return p;
            }
        }
        return ordering.policy();
    }

    /** Which running jobs a pending one may preempt (see docs/design/fair-share.md, "Preemption"). */
    public enum Reclaim {
        /** Never take back lent quota by preemption. */
        NEVER,
        /** Only borrowers' jobs of lower priority than the reclaiming job. */
        LOWER_PRIORITY,
        /** Any job of a queue that borrows the quota (Kueue's reclaimWithinCohort: Any). */
        ANY
    }

    /**
     * Preemption policy.
     *
     * @param reclaim       a queue below its nominal quota takes back quota other queues of its cohort tree borrowed
     * @param withinQueue   a job preempts lower-priority (class, then job priority) jobs of its own queue
     * @param overFairShare a queue below its fair share preempts queues above theirs, never pushing a victim's queue
     *                      below the preemptor's resulting share
     * @param gracePeriod   how long a victim's tasks get to checkpoint between SIGTERM and the kill
     * @param minRunTime    a run younger than this is never a victim (protects against thrashing)
     */
    public record Preemption(Reclaim reclaim, boolean withinQueue, boolean overFairShare, Duration gracePeriod,
                             Duration minRunTime) {
        public static final Preemption DEFAULT = new Preemption(Reclaim.ANY, true, false, Duration.ofSeconds(30),
                Duration.ofMinutes(5));
        public static final Preemption OFF = new Preemption(Reclaim.NEVER, false, false, Duration.ofSeconds(30),
                Duration.ZERO);

        public Preemption {
            Objects.requireNonNull(reclaim, "reclaim");
            Objects.requireNonNull(gracePeriod, "gracePeriod");
            Objects.requireNonNull(minRunTime, "minRunTime");
        }

        public boolean enabled() {
            return reclaim != Reclaim.NEVER || withinQueue || overFairShare;
        }
    }

    /** A configuration with the default preemption policy. */
    public FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                           Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                           Duration starvationWait, Quotas implicitQuotas) {
        this(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife, starvationWait,
                implicitQuotas, Preemption.DEFAULT);
    }

    /** A configuration with the default ordering. */
    public FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                           Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                           Duration starvationWait, Quotas implicitQuotas, Preemption preemption) {
        this(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife, starvationWait,
                implicitQuotas, preemption, Ordering.DEFAULT);
    }

    /** A configuration without pools (one pool; the queue chooses none) and without idle reclamation. */
    public FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                           Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                           Duration starvationWait, Quotas implicitQuotas, Preemption preemption, Ordering ordering,
                           Duration maxDrain) {
        this(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife, starvationWait,
                implicitQuotas, preemption, ordering, maxDrain, Map.of(), null);
    }


    /** The pool a job is offered to: the one it asked for, else its flavour's; null: placement's {@code default}. */
    public String poolOf(String asked, String flavour) {
        if (asked != null) {
            return asked;
        }
        return flavour == null ? null : flavourPools.get(flavour);
    }

    /**
     * Whether a job asking for {@code pool} may be admitted on {@code flavour}: the flavour is that pool's (one not
     * in the map is {@code default}'s); always, when the configuration maps no flavour (one pool).
     */
    boolean inPool(String pool, String flavour) {
        return pool == null || flavourPools.isEmpty() || pool.equals(flavourPools.getOrDefault(flavour, "default"));
    }

    /** The same configuration with another flavour -> pool map. */
    public FairShareConfig withFlavourPools(Map<String, String> pools) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                starvationWait, implicitQuotas, preemption, ordering, maxDrain, pools, idleTimeout, shardPins);
    }

    /** A configuration whose cohort trees all go to the shards their names hash to. */
    public FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                           Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                           Duration starvationWait, Quotas implicitQuotas, Preemption preemption, Ordering ordering,
                           Duration maxDrain, Map<String, String> flavourPools, Duration idleTimeout) {
        this(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife, starvationWait,
                implicitQuotas, preemption, ordering, maxDrain, flavourPools, idleTimeout, Map.of());
    }

    /** A configuration with the default drain bound. */
    public FairShareConfig(List<String> flavours, Map<String, String> cohorts, List<QueueDef> queues,
                           Map<String, Integer> priorityClasses, String defaultPriorityClass, Duration halfLife,
                           Duration starvationWait, Quotas implicitQuotas, Preemption preemption, Ordering ordering) {
        this(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife, starvationWait,
                implicitQuotas, preemption, ordering, DEFAULT_MAX_DRAIN);
    }


    /**
     * The idle timeout of queue {@code queueName} (its own, else the configuration's), or null when its runs are never
     * stopped for idling (also for a queue this configuration does not have).
     */
    public Duration idleTimeoutOf(String queueName) {
        if (isImplicit()) {
            return idleTimeout;
        }
        for (QueueDef q : queues) {
            if (q.name().equals(queueName)) {
                Duration own = q.idleTimeout() != null ? q.idleTimeout() : idleTimeout;
                return own == null || own.isZero() ? null : own;
            }
        }
        return null;
    }

    /**
     * This configuration as a document {@link #fromYaml} reads back into an equal configuration (maps, lists,
     * strings, numbers; durations in ISO-8601): how a configuration built in code (a replay's quotas) is handed to
     * the service, which takes its configuration as text. Not for the implicit form, which has its own text.
     */
    public Map<String, Object> toDocument() {
        if (implicitQuotas != null) {
            throw new IllegalArgumentException("an implicit configuration is written as its implicit: document");
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("halfLife", halfLife.toString());
        doc.put("starvationWait", starvationWait.toString());
        doc.put("maxDrain", maxDrain == null ? "never" : maxDrain.toString());
        doc.put("idleTimeout", idleTimeout == null ? "never" : idleTimeout.toString());
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("reclaimWithinCohort", switch (preemption.reclaim()) {
            case NEVER -> "never";
            case LOWER_PRIORITY -> "lowerPriority";
            case ANY -> "any";
        });
        p.put("withinQueue", preemption.withinQueue() ? "lowerPriority" : "never");
        p.put("overFairShare", preemption.overFairShare());
        p.put("gracePeriod", preemption.gracePeriod().toString());
        p.put("minRunTime", preemption.minRunTime().toString());
        doc.put("preemption", p);
        doc.put("ordering", orderingDocument(ordering));
        if (!flavourPools.isEmpty()) {
            doc.put("pools", new LinkedHashMap<>(flavourPools));
        }
        if (!flavours.isEmpty()) {
            doc.put("flavours", new ArrayList<>(flavours));
        }
        Map<String, Object> classes = new LinkedHashMap<>(priorityClasses);
        doc.put("priorityClasses", new LinkedHashMap<>(Map.of("default", defaultPriorityClass, "classes", classes)));
        List<Object> cohortList = new ArrayList<>();
        cohorts.forEach((name, parent) -> {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("name", name);
            if (parent != null) {
                c.put("parent", parent);
            }
            if (ordering.cohorts().containsKey(name)) {
                c.put("ordering", ordering.cohorts().get(name).name().toLowerCase(java.util.Locale.ROOT));
            }
            if (shardPins.containsKey("cohort:" + name)) {
                c.put("shard", shardPins.get("cohort:" + name));
            }
            cohortList.add(c);
        });
        doc.put("cohorts", cohortList);
        List<Object> queueList = new ArrayList<>();
        for (QueueDef q : queues) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", q.name());
            m.put("tenant", q.tenant());
            if (q.cohort() != null) {
                m.put("cohort", q.cohort());
            }
            m.put("weight", q.weight());
            if (q.ordering() != null) {
                m.put("ordering", q.ordering().name().toLowerCase(java.util.Locale.ROOT));
            }
            if (q.idleTimeout() != null) {
                m.put("idleTimeout", q.idleTimeout().isZero() ? "never" : q.idleTimeout().toString());
            }
            if (shardPins.containsKey("queue:" + q.name())) {
                m.put("shard", shardPins.get("queue:" + q.name()));
            }
            Map<String, Object> quotas = new LinkedHashMap<>();
            q.quotas().forEach((resource, rq) -> {
                boolean gpu = flavours.contains(resource);
                Map<String, Object> limits = new LinkedHashMap<>();
                limits.put("nominal", written(gpu, rq.nominal()));
                if (rq.borrowingLimit() != null) {
                    limits.put("borrowingLimit", written(gpu, rq.borrowingLimit()));
                }
                if (rq.lendingLimit() != null) {
                    limits.put("lendingLimit", written(gpu, rq.lendingLimit()));
                }
                quotas.put(resource, limits);
            });
            m.put("quotas", quotas);
            queueList.add(m);
        }
        doc.put("queues", queueList);
        return doc;
    }

    /** The {@code ordering:} block of a document. */
    static Map<String, Object> orderingDocument(Ordering o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", o.policy().name().toLowerCase(java.util.Locale.ROOT));
        List<Object> hours = new ArrayList<>();
        for (long s : o.levels()) {
            hours.add(gpuHours(s));
        }
        m.put("levels", hours);
        m.put("promoteAfter", o.promoteAfter() == null ? "never" : o.promoteAfter().toString());
        m.put("preemptAfter", gpuHours(o.preemptAfter()));
        return m;
    }

    /** GPU-seconds as the document writes them: whole GPU-hours as a whole number, else a fraction. */
    private static Object gpuHours(long seconds) {
        return seconds % 3600 == 0 ? (Object) (seconds / 3600) : (Object) (seconds / 3600.0);
    }

    /** A GPU amount in thousandths as written in a document: whole GPUs as a whole number, else a decimal. */
    private static Object written(boolean gpu, long v) {
        if (!gpu) {
            return v;
        }
        return v % GpuShares.WHOLE == 0 ? (Object) (v / GpuShares.WHOLE) : (Object) GpuShares.toGpus(v).doubleValue();
    }

    private static String people(boolean gpu, long v) {
        return gpu ? GpuShares.format(v) : Long.toString(v);
    }

    /** The same configuration with another preemption policy. */
    public FairShareConfig withPreemption(Preemption p) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                starvationWait, implicitQuotas, p, ordering, maxDrain, flavourPools, idleTimeout, shardPins);
    }

    /** The same configuration with another ordering inside queues. */
    public FairShareConfig withOrdering(Ordering o) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                starvationWait, implicitQuotas, preemption, o, maxDrain, flavourPools, idleTimeout, shardPins);
    }

    /** The same configuration with another starvation wait (how long a head waits before a reservation is asked). */
    public FairShareConfig withStarvationWait(Duration d) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                d, implicitQuotas, preemption, ordering, maxDrain, flavourPools, idleTimeout, shardPins);
    }

    /** The same configuration with another drain bound (null: drains only wait). */
    public FairShareConfig withMaxDrain(Duration d) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                starvationWait, implicitQuotas, preemption, ordering, d, flavourPools, idleTimeout, shardPins);
    }

    /** The same configuration with another idle timeout for queues that set none (null: never). */
    public FairShareConfig withIdleTimeout(Duration d) {
        return new FairShareConfig(flavours, cohorts, queues, priorityClasses, defaultPriorityClass, halfLife,
                starvationWait, implicitQuotas, preemption, ordering, maxDrain, flavourPools, d, shardPins);
    }

    public FairShareConfig {
        Objects.requireNonNull(preemption, "preemption");
        Objects.requireNonNull(ordering, "ordering");
        flavours = List.copyOf(flavours);
        cohorts = Collections.unmodifiableMap(new LinkedHashMap<>(cohorts));
        queues = List.copyOf(queues);
        priorityClasses = Collections.unmodifiableMap(new LinkedHashMap<>(priorityClasses));
        Objects.requireNonNull(halfLife, "halfLife");
        Objects.requireNonNull(starvationWait, "starvationWait");
        flavourPools = flavourPools == null ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(flavourPools));
        shardPins = shardPins == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(shardPins));
        shardPins.forEach((tree, shard) -> {
            if (shard == null || shard < 0) {
                throw new IllegalArgumentException("the shard of " + tree + " must be >= 0, was " + shard);
            }
        });
    }

    /** Without a configuration file: an implicit queue per tenant, GPU quota from {@code quotas}, no borrowing. */
    public static FairShareConfig implicit(Quotas quotas, Duration halfLife, Duration starvationWait) {
        return new FairShareConfig(List.of(ANY_GPU), Map.of(), List.of(), Map.of(DEFAULT_CLASS, 0), DEFAULT_CLASS,
                halfLife, starvationWait, Objects.requireNonNull(quotas));
    }

    public static FairShareConfig implicit(Quotas quotas) {
        return implicit(quotas, Duration.ofDays(7), Duration.ofMinutes(30));
    }

    public boolean isImplicit() {
        return implicitQuotas != null;
    }

    /** The implicit queue of a tenant (only without a configuration file). */
    QueueDef implicitQueue(String tenant) {
        return new QueueDef(tenant, tenant, null, 1.0,
                Map.of(ANY_GPU, new ResourceQuota(implicitQuotas.of(tenant), null, null)));
    }

    /**
     * Whether a job of {@code tenant} asking for queue {@code requested} has a queue: the one it names, else (null)
     * the one named after the tenant, and it must belong to the tenant. Implicit queues exist for every tenant.
     */
    public boolean hasQueue(String tenant, String requested) {
        String name = requested == null ? tenant : requested;
        if (isImplicit()) {
            return name.equals(tenant);
        }
        for (QueueDef q : queues) {
            if (q.name().equals(name)) {
                return q.tenant().equals(tenant);
            }
        }
        return false;
    }

    /** All resource names: GPU flavours, then cpu and memory. */
    public List<String> resources() {
        List<String> all = new ArrayList<>(flavours);
        all.add(CPU);
        all.add(MEMORY);
        return all;
    }

    // ------------------------------------------------------------------ parsing and validation

    /**
     * Builds and validates a configuration from a parsed YAML document (maps, lists, strings, numbers). Every problem
     * is reported with its path; nothing is half-applied.
     */
    public static FairShareConfig fromYaml(Object document) {
        Reader r = new Reader();
        Map<String, Object> root = r.map(document, "");
        if (root == null) {
            throw new ConfigException(r.problems.isEmpty() ? List.of("(root): must be a mapping") : r.problems);
        }
        r.onlyKeys(root, "", Set.of("flavours", "cohorts", "queues", "priorityClasses", "halfLife", "starvationWait",
                "tenants", "preemption", "implicit", "ordering", "maxDrain", "pools", "idleTimeout"));
        Duration halfLife = r.duration(root.get("halfLife"), "halfLife", Duration.ofDays(7));
        Duration starvation = r.duration(root.get("starvationWait"), "starvationWait", Duration.ofMinutes(30));
        if (starvation != null && starvation.isZero()) {
            r.problem("starvationWait", "must be > 0");
        }
        Duration maxDrain = DEFAULT_MAX_DRAIN;
        if ("never".equals(root.get("maxDrain"))) {
            maxDrain = null;
        } else if (root.get("maxDrain") != null) {
            maxDrain = r.duration(root.get("maxDrain"), "maxDrain", null);
        }
        Duration idleTimeout = idleTimeout(r, root.get("idleTimeout"), "idleTimeout");
        if (idleTimeout != null && idleTimeout.isZero()) {
            idleTimeout = null;
        }
        if (root.containsKey("implicit")) {
            return implicitFromYaml(r, root, halfLife, starvation).withMaxDrain(maxDrain).withIdleTimeout(idleTimeout);
        }

        List<String> flavours = new ArrayList<>();
        List<Object> fl = r.list(root.get("flavours"), "flavours");
        for (int i = 0; fl != null && i < fl.size(); i++) {
            String f = r.string(fl.get(i), "flavours[" + i + "]");
            if (f == null) {
                continue;
            }
            if (f.equals(CPU) || f.equals(MEMORY)) {
                r.problem("flavours[" + i + "]", "'" + f + "' is a built-in resource, not a GPU flavour");
            } else if (flavours.contains(f)) {
                r.problem("flavours[" + i + "]", "duplicate flavour '" + f + "'");
            } else {
                flavours.add(f);
            }
        }
        if (fl != null && flavours.isEmpty()) {
            r.problem("flavours", "must name at least one GPU flavour");
        }

        Set<String> tenants = null;
        List<Object> tl = r.list(root.get("tenants"), "tenants");
        if (tl != null) {
            tenants = new HashSet<>();
            for (int i = 0; i < tl.size(); i++) {
                String t = r.name(tl.get(i), "tenants[" + i + "]");
                if (t != null) {
                    tenants.add(t);
                }
            }
        }

        Map<String, String> cohorts = new LinkedHashMap<>();
        Map<String, OrderingPolicy> cohortOrdering = new LinkedHashMap<>();
        Map<String, Integer> shardPins = new LinkedHashMap<>();
        List<Object> cl = r.list(root.get("cohorts"), "cohorts");
        for (int i = 0; cl != null && i < cl.size(); i++) {
            String path = "cohorts[" + i + "]";
            Map<String, Object> c = r.map(cl.get(i), path);
            if (c == null) {
                continue;
            }
            r.onlyKeys(c, path, Set.of("name", "parent", "ordering", "shard"));
            String name = r.name(c.get("name"), path + ".name");
            String parent = c.get("parent") == null ? null : r.name(c.get("parent"), path + ".parent");
            Integer shard = shard(r, c.get("shard"), path + ".shard");
            if (shard != null && parent != null) {
                r.problem(path + ".shard", "only a root cohort (a whole cohort tree) is pinned to a shard; cohort '"
                        + name + "' is under '" + parent + "'");
            } else if (shard != null && name != null) {
                shardPins.put("cohort:" + name, shard);
            }
            OrderingPolicy cohortPolicy = c.get("ordering") == null ? null
                    : orderingPolicy(r, c.get("ordering"), path + ".ordering");
            if (name != null) {
                if (cohorts.containsKey(name)) {
                    r.problem(path + ".name", "duplicate cohort '" + name + "'");
                }
                cohorts.put(name, parent);
                if (cohortPolicy != null) {
                    cohortOrdering.put(name, cohortPolicy);
                }
            }
        }
        int ci = 0;
        for (Map.Entry<String, String> c : cohorts.entrySet()) {
            String path = "cohorts[" + ci++ + "].parent";
            if (c.getValue() != null && !cohorts.containsKey(c.getValue())) {
                r.problem(path, "unknown cohort '" + c.getValue() + "'");
                continue;
            }
            // a cycle: following parents from here comes back here
            Set<String> seen = new HashSet<>();
            String at = c.getKey();
            while (at != null && seen.add(at)) {
                at = cohorts.get(at);
            }
            if (at != null && at.equals(c.getKey())) {
                r.problem(path, "cohort '" + c.getKey() + "' is its own ancestor (cycle)");
            }
        }

        List<QueueDef> queues = new ArrayList<>();
        Set<String> queueNames = new HashSet<>();
        List<Object> ql = r.list(root.get("queues"), "queues");
        if (ql == null || ql.isEmpty()) {
            r.problem("queues", "must list at least one queue");
        }
        for (int i = 0; ql != null && i < ql.size(); i++) {
            String path = "queues[" + i + "]";
            Map<String, Object> q = r.map(ql.get(i), path);
            if (q == null) {
                continue;
            }
            r.onlyKeys(q, path, Set.of("name", "tenant", "cohort", "weight", "quotas", "ordering", "idleTimeout",
                    "shard"));
            Duration queueIdle = idleTimeout(r, q.get("idleTimeout"), path + ".idleTimeout");
            OrderingPolicy queueOrdering = q.get("ordering") == null ? null
                    : orderingPolicy(r, q.get("ordering"), path + ".ordering");
            String name = r.name(q.get("name"), path + ".name");
            String tenant = r.name(q.get("tenant"), path + ".tenant");
            String cohort = q.get("cohort") == null ? null : r.name(q.get("cohort"), path + ".cohort");
            double weight = q.get("weight") == null ? 1.0 : r.number(q.get("weight"), path + ".weight");
            if (!(weight > 0)) {
                r.problem(path + ".weight", "must be > 0, was " + q.get("weight"));
            }
            if (name != null && !queueNames.add(name)) {
                r.problem(path + ".name", "duplicate queue '" + name + "'");
            }
            if (tenant != null && tenants != null && !tenants.contains(tenant)) {
                r.problem(path + ".tenant", "unknown tenant '" + tenant + "' (not in tenants)");
            }
            if (cohort != null && !cohorts.containsKey(cohort)) {
                r.problem(path + ".cohort", "unknown cohort '" + cohort + "'");
            }
            Integer shard = shard(r, q.get("shard"), path + ".shard");
            if (shard != null && cohort != null) {
                r.problem(path + ".shard", "only a queue in no cohort is a tree of its own; this one is in cohort "
                        + cohort + ": pin its root cohort instead");
            } else if (shard != null && name != null) {
                shardPins.put("queue:" + name, shard);
            }
            Map<String, ResourceQuota> quotas = new LinkedHashMap<>();
            Map<String, Object> qm = q.get("quotas") == null ? Map.of() : r.map(q.get("quotas"), path + ".quotas");
            if (qm != null) {
                for (Map.Entry<String, Object> e : qm.entrySet()) {
                    String rp = path + ".quotas." + e.getKey();
                    if (!flavours.contains(e.getKey()) && !e.getKey().equals(CPU) && !e.getKey().equals(MEMORY)) {
                        r.problem(rp, "unknown flavour '" + e.getKey() + "' (flavours: " + flavours + ", cpu, memory)");
                        continue;
                    }
                    Map<String, Object> lim = r.map(e.getValue(), rp);
                    if (lim == null) {
                        continue;
                    }
                    r.onlyKeys(lim, rp, Set.of("nominal", "borrowingLimit", "lendingLimit"));
                    // GPU flavours are written in GPUs (fractions allowed) and kept in thousandths
                    boolean gpu = flavours.contains(e.getKey());
                    Long nominal = r.amount(gpu, lim.get("nominal"), rp + ".nominal");
                    if (lim.get("nominal") == null) {
                        r.problem(rp + ".nominal", "is required");
                    }
                    Long borrow = lim.get("borrowingLimit") == null ? null
                            : r.amount(gpu, lim.get("borrowingLimit"), rp + ".borrowingLimit");
                    Long lend = lim.get("lendingLimit") == null ? null
                            : r.amount(gpu, lim.get("lendingLimit"), rp + ".lendingLimit");
                    if (nominal != null && lend != null && lend > nominal) {
                        r.problem(rp + ".lendingLimit", "must be <= nominal " + people(gpu, nominal) + ", was "
                                + people(gpu, lend));
                    }
                    if (cohort == null && (borrow != null && borrow > 0 || lend != null)) {
                        r.problem(rp, "borrowingLimit/lendingLimit need the queue to be in a cohort");
                    }
                    if (nominal != null) {
                        quotas.put(e.getKey(), new ResourceQuota(nominal, borrow, lend));
                    }
                }
            }
            if (name != null && tenant != null) {
                queues.add(new QueueDef(name, tenant, cohort, weight, quotas, queueOrdering, queueIdle));
            }
        }

        Map<String, Integer> classes = new LinkedHashMap<>();
        String defaultClass = DEFAULT_CLASS;
        Map<String, Object> pc = root.get("priorityClasses") == null ? null
                : r.map(root.get("priorityClasses"), "priorityClasses");
        if (pc != null) {
            r.onlyKeys(pc, "priorityClasses", Set.of("default", "classes"));
            Map<String, Object> cm = r.map(pc.get("classes"), "priorityClasses.classes");
            if (cm != null) {
                for (Map.Entry<String, Object> e : cm.entrySet()) {
                    String p = "priorityClasses.classes." + e.getKey();
                    if (r.name(e.getKey(), p) != null) {
                        double v = r.number(e.getValue(), p);
                        if (v != Math.rint(v) || Math.abs(v) > 1_000_000_000) {
                            r.problem(p, "must be a whole number within +-1e9, was " + e.getValue());
                        }
                        classes.put(e.getKey(), (int) v);
                    }
                }
            }
            defaultClass = pc.get("default") == null ? null : r.string(pc.get("default"), "priorityClasses.default");
            if (defaultClass == null) {
                r.problem("priorityClasses.default", "is required when classes are given");
            } else if (!classes.containsKey(defaultClass)) {
                r.problem("priorityClasses.default", "unknown priority class '" + defaultClass + "'");
            }
        } else {
            classes.put(DEFAULT_CLASS, 0);
        }
        Preemption preemption = preemption(r, root.get("preemption"));
        Ordering ordering = ordering(r, root.get("ordering"));
        Map<String, String> pools = new LinkedHashMap<>();
        Map<String, Object> pm = root.get("pools") == null ? null : r.map(root.get("pools"), "pools");
        if (pm != null) {
            pm.forEach((flavour, pool) -> {
                String path = "pools." + flavour;
                String name = r.string(pool, path);
                if (!flavours.contains(flavour)) {
                    r.problem(path, "'" + flavour + "' is not a GPU flavour of this configuration (flavours: "
                            + String.join(", ", flavours) + ")");
                } else if (name != null && !name.matches("[a-z0-9-]{1,32}")) {
                    r.problem(path, "a pool name is 1-32 lower-case letters, digits or '-'");
                } else if (name != null) {
                    pools.put(flavour, name);
                }
            });
        }
        if (!r.problems.isEmpty()) {
            throw new ConfigException(r.problems);
        }
        return new FairShareConfig(flavours, cohorts, queues, classes, defaultClass, halfLife, starvation, null,
                preemption, ordering.withCohorts(cohortOrdering), maxDrain, pools, idleTimeout, shardPins);
    }

    /** A {@code shard:} of a root cohort or of a queue in no cohort: a whole number >= 0, or null when absent. */
    private static Integer shard(Reader r, Object value, String path) {
        if (value == null) {
            return null;
        }
        double v = r.number(value, path);
        if (v != Math.rint(v) || v < 0 || v > 1023) {
            r.problem(path, "must be a whole number from 0 to 1023 (a shard of gantry.queue.shards), was " + value);
            return null;
        }
        return (int) v;
    }

    /**
     * The document form of the implicit configuration (one queue per tenant, named after it, GPU quota only), so
     * that what the admin API shows for it can be applied again:
     * {@code implicit: {defaultGpuQuota: 64, quotas: {team-a: 8}}} plus halfLife, starvationWait and preemption.
     */
    private static FairShareConfig implicitFromYaml(Reader r, Map<String, Object> root, Duration halfLife,
                                                    Duration starvation) {
        for (String k : List.of("flavours", "cohorts", "queues", "priorityClasses", "tenants", "pools")) {
            if (root.containsKey(k)) {
                r.problem(k, "not allowed with implicit (implicit queues are one per tenant, named after it)");
            }
        }
        Map<String, Object> m = r.map(root.get("implicit"), "implicit");
        Long defaultMilli = null;
        Map<String, Long> perTenant = new LinkedHashMap<>();
        if (m != null) {
            r.onlyKeys(m, "implicit", Set.of("defaultGpuQuota", "quotas"));
            defaultMilli = r.gpus(m.get("defaultGpuQuota"), "implicit.defaultGpuQuota");
            Map<String, Object> qm = m.get("quotas") == null ? Map.of() : r.map(m.get("quotas"), "implicit.quotas");
            if (qm != null) {
                for (Map.Entry<String, Object> e : qm.entrySet()) {
                    String p = "implicit.quotas." + e.getKey();
                    Long milli = e.getKey().isBlank() ? null : r.gpus(e.getValue(), p);
                    if (e.getKey().isBlank()) {
                        r.problem(p, "tenant name must not be blank");
                    } else if (milli != null) {
                        perTenant.put(e.getKey(), milli);
                    }
                }
            }
        }
        Preemption preemption = preemption(r, root.get("preemption"));
        Ordering ordering = ordering(r, root.get("ordering"));
        if (!r.problems.isEmpty()) {
            throw new ConfigException(r.problems);
        }
        return implicit(new Quotas(defaultMilli, perTenant), halfLife, starvation).withPreemption(preemption)
                .withOrdering(ordering);
    }

    /**
     * An {@code idleTimeout}: null when absent, {@link Duration#ZERO} for {@code never}, else at least
     * {@link #MIN_IDLE_TIMEOUT}.
     */
    private static Duration idleTimeout(Reader r, Object o, String path) {
        if (o == null) {
            return null;
        }
        if ("never".equals(o)) {
            return Duration.ZERO;
        }
        Duration d = r.duration(o, path, null);
        if (d != null && d.compareTo(MIN_IDLE_TIMEOUT) < 0) {
            r.problem(path, "must be at least 1m, or never, was '" + o + "'");
            return null;
        }
        return d;
    }

    private static OrderingPolicy orderingPolicy(Reader r, Object o, String path) {
        if ("fifo".equals(o)) {
            return OrderingPolicy.FIFO;
        }
        if ("las".equals(o)) {
            return OrderingPolicy.LAS;
        }
        r.problem(path, "must be fifo or las, was '" + o + "'");
        return null;
    }

    /**
     * {@code ordering: {policy: las, levels: [1, 8], promoteAfter: 8h, preemptAfter: 32}}: levels in GPU-hours,
     * ascending; preemptAfter in GPU-hours.
     */
    private static Ordering ordering(Reader r, Object node) {
        Ordering d = Ordering.DEFAULT;
        Map<String, Object> m = node == null ? null : r.map(node, "ordering");
        if (m == null) {
            return d;
        }
        r.onlyKeys(m, "ordering", Set.of("policy", "levels", "promoteAfter", "preemptAfter"));
        OrderingPolicy policy = m.get("policy") == null ? d.policy()
                : orderingPolicy(r, m.get("policy"), "ordering.policy");
        List<Long> levels = d.levels();
        List<Object> ll = r.list(m.get("levels"), "ordering.levels");
        if (ll != null) {
            levels = new ArrayList<>();
            for (int i = 0; i < ll.size(); i++) {
                String p = "ordering.levels[" + i + "]";
                double hours = r.number(ll.get(i), p);
                long seconds = Math.round(hours * 3600);
                if (!(hours > 0) || hours > 1_000_000) {
                    r.problem(p, "must be GPU-hours > 0 (at most 1e6), was " + ll.get(i));
                } else if (!levels.isEmpty() && seconds <= levels.get(levels.size() - 1)) {
                    r.problem(p, "must be greater than the level before it, was " + ll.get(i));
                } else {
                    levels.add(seconds);
                }
            }
            if (ll.isEmpty() || ll.size() > 8) {
                r.problem("ordering.levels", "must list 1 to 8 thresholds in GPU-hours, had " + ll.size());
            }
        }
        Duration promote = d.promoteAfter();
        Object pa = m.get("promoteAfter");
        if ("never".equals(pa)) {
            promote = null;
        } else if (pa != null) {
            promote = r.duration(pa, "ordering.promoteAfter", d.promoteAfter());
            if (promote != null && (promote.isZero() || promote.isNegative())) {
                r.problem("ordering.promoteAfter", "must be > 0 or never, was '" + pa + "'");
            }
        }
        long preemptAfter = d.preemptAfter();
        if (m.get("preemptAfter") != null) {
            double hours = r.number(m.get("preemptAfter"), "ordering.preemptAfter");
            if (hours < 0 || hours > 1_000_000) {
                r.problem("ordering.preemptAfter", "must be GPU-hours >= 0 (at most 1e6), was " + m.get("preemptAfter"));
            } else if (!Double.isNaN(hours)) { // NaN: not a number, already said
                preemptAfter = Math.round(hours * 3600);
            }
        }
        return new Ordering(policy == null ? d.policy() : policy, levels, promote, preemptAfter);
    }

    private static Preemption preemption(Reader r, Object node) {
        Preemption d = Preemption.DEFAULT;
        if (node == null) {
            return d;
        }
        Map<String, Object> m = r.map(node, "preemption");
        if (m == null) {
            return d;
        }
        r.onlyKeys(m, "preemption", Set.of("reclaimWithinCohort", "withinQueue", "overFairShare", "gracePeriod",
                "minRunTime"));
        Reclaim reclaim = d.reclaim();
        Object rc = m.get("reclaimWithinCohort");
        if (rc != null) {
            reclaim = switch (String.valueOf(rc)) {
                case "never" -> Reclaim.NEVER;
                case "lowerPriority" -> Reclaim.LOWER_PRIORITY;
                case "any" -> Reclaim.ANY;
                default -> {
                    r.problem("preemption.reclaimWithinCohort", "must be never, lowerPriority or any, was '" + rc + "'");
                    yield d.reclaim();
                }
            };
        }
        boolean within = d.withinQueue();
        Object wq = m.get("withinQueue");
        if (wq != null) {
            if ("never".equals(wq)) {
                within = false;
            } else if ("lowerPriority".equals(wq)) {
                within = true;
            } else {
                r.problem("preemption.withinQueue", "must be never or lowerPriority, was '" + wq + "'");
            }
        }
        boolean overFair = d.overFairShare();
        Object of = m.get("overFairShare");
        if (of instanceof Boolean b) {
            overFair = b;
        } else if (of != null) {
            r.problem("preemption.overFairShare", "must be true or false, was '" + of + "'");
        }
        Duration grace = r.duration(m.get("gracePeriod"), "preemption.gracePeriod", d.gracePeriod());
        if (grace.compareTo(Duration.ofHours(1)) > 0) {
            r.problem("preemption.gracePeriod", "must be at most 1h, was '" + m.get("gracePeriod") + "'");
            grace = d.gracePeriod();
        }
        Duration minRun = r.duration(m.get("minRunTime"), "preemption.minRunTime", d.minRunTime());
        return new Preemption(reclaim, within, overFair, grace, minRun);
    }

    /** Accumulates problems with their paths while walking the untyped YAML tree. */
    private static final class Reader {
        final List<String> problems = new ArrayList<>();

        void problem(String path, String message) {
            problems.add((path.isEmpty() ? "(root)" : path) + ": " + message);
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> map(Object o, String path) {
            if (o instanceof Map<?, ?> m) {
                for (Object k : m.keySet()) {
                    if (!(k instanceof String)) {
                        problem(path, "keys must be strings, found " + k);
                        return null;
                    }
                }
                return (Map<String, Object>) m;
            }
            problem(path, "must be a mapping");
            return null;
        }

        @SuppressWarnings("unchecked")
        List<Object> list(Object o, String path) {
            if (o == null) {
                return null;
            }
            if (o instanceof List<?> l) {
                return (List<Object>) l;
            }
            problem(path, "must be a list");
            return null;
        }

        void onlyKeys(Map<String, Object> m, String path, Set<String> allowed) {
            for (String k : m.keySet()) {
                if (!allowed.contains(k)) {
                    problem(path.isEmpty() ? k : path + "." + k, "unknown key (allowed: " + allowed.stream().sorted()
                            .toList() + ")");
                }
            }
        }

        String string(Object o, String path) {
            if (o instanceof String s && !s.isBlank()) {
                return s;
            }
            problem(path, o == null ? "is required" : "must be a non-empty string, was " + o);
            return null;
        }

        String name(Object o, String path) {
            String s = string(o, path);
            if (s != null && !NAME.matcher(s).matches()) {
                problem(path, "must be a lower-case name ([a-z0-9][a-z0-9-]{0,62}), was '" + s + "'");
                return null;
            }
            return s;
        }

        double number(Object o, String path) {
            if (o instanceof Number n) {
                return n.doubleValue();
            }
            problem(path, "must be a number, was " + o);
            return Double.NaN;
        }

        /** A GPU amount (GPUs, at most three decimals) in thousandths, or a plain count of another resource. */
        Long amount(boolean gpu, Object o, String path) {
            if (!gpu) {
                return count(o, path);
            }
            return gpus(o, path);
        }

        /** GPUs written by people ({@code 12}, {@code 12.5}) in thousandths; null (a problem noted) if not. */
        Long gpus(Object o, String path) {
            if (o instanceof Number || o instanceof String) {
                try {
                    long milli = GpuShares.fromGpus(new BigDecimal(o.toString().strip()));
                    if (milli < 0) {
                        problem(path, "must be >= 0, was " + o);
                        return null;
                    }
                    return milli;
                } catch (NumberFormatException e) {
                    problem(path, "must be a number of GPUs such as 8 or 12.5, was " + o);
                    return null;
                } catch (IllegalArgumentException e) {
                    problem(path, "GPUs are counted in thousandths (at most three decimals), was " + o);
                    return null;
                }
            }
            problem(path, o == null ? "is required" : "must be a number of GPUs such as 8 or 12.5, was " + o);
            return null;
        }

        Long count(Object o, String path) {
            if (o instanceof Integer || o instanceof Long) {
                long v = ((Number) o).longValue();
                if (v < 0) {
                    problem(path, "must be >= 0, was " + v);
                    return null;
                }
                return v;
            }
            problem(path, o == null ? "is required" : "must be a whole number, was " + o);
            return null;
        }

        Duration duration(Object o, String path, Duration fallback) {
            if (o == null) {
                return fallback;
            }
            Duration d = parseDuration(String.valueOf(o));
            if (d == null || d.isNegative()) {
                problem(path, "must be a duration >= 0 such as 7d, 12h, 30m, 45s or PT1H, was '" + o + "'");
                return fallback;
            }
            return d;
        }
    }

    /** {@code 7d}, {@code 12h}, {@code 30m}, {@code 45s}, {@code 0} or ISO-8601 ({@code PT1H}); null if malformed. */
    public static Duration parseDuration(String s) {
        if (s.chars().anyMatch(Character::isISOControl)) {
            // invalid: trim() would drop a trailing NUL or bell and accept a value the client did not write
            return null;
        }
        String t = s.strip();
        try {
            if (t.equals("0")) {
                return Duration.ZERO;
            }
            if (t.startsWith("P") || t.startsWith("-P")) {
                return Duration.parse(t);
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1));
            return switch (t.charAt(t.length() - 1)) {
                case 'd' -> Duration.ofDays(n);
                case 'h' -> Duration.ofHours(n);
                case 'm' -> Duration.ofMinutes(n);
                case 's' -> Duration.ofSeconds(n);
                default -> null;
            };
        } catch (RuntimeException e) {
            return null;
        }
    }
}
