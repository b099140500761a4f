package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Preemption (Kueue's preemptor): for a queue head quota keeps out, the cheapest set of running attempts whose quota
 * lets it in: reclaim (a queue within its nominal quota takes back what others borrowed), within a queue (lower
 * priority) and, when configured, fair share. Remembers the runs being preempted until their quota is released or the
 * preemption expires; at most one preemptor per cohort tree at a time.
 */
final class Preemptor {
    private final QuotaTree tree;
    private final QuotaLedger ledger;
    private final FairShareConfig config;
    private final DispatchPolicy policy;
    /** Runs being preempted, by job id. */
    private final Map<String, PreemptedRun> preempting = new TreeMap<>();
    /** Set by a tick: every cohort tree is checked for preemption in the next cycle, not only the changed ones. */
    private boolean timePassed;
    private Checkpoints checkpoints = new Checkpoints();

    Preemptor(QuotaTree tree, QuotaLedger ledger, FairShareConfig config, DispatchPolicy policy) {
        this.tree = tree;
        this.ledger = ledger;
        this.config = config;
        this.policy = policy;
    }

    /** The checkpoints the core learned: preemption loses only the work since a run's last one. */
    void checkpoints(Checkpoints known) {
        this.checkpoints = known;
    }

    /** Takes over the runs being preempted under the previous configuration. */
    void adopt(Preemptor previous) {
        preempting.putAll(previous.preempting);
    }

    /** A JobPreempted fact: the run is being stopped; its tree starts no other preemption until it is released. */
    void preempted(String jobId, int attempt, String preemptor, PreemptionReason reason, String message,
                   long atMillis, long graceMillis) {
        // placement releases at the end of the grace period; if that release never comes (the run had not been
        // granted yet, placement lost it), the preemption expires and may be decided again
        long expires = atMillis + graceMillis + Math.max(30_000, graceMillis);
        preempting.put(jobId, new PreemptedRun(jobId, attempt, preemptor, reason, message, expires));
    }

    /** Whether the attempt is being preempted (asked, neither released nor expired at {@code t}). */
    boolean stopping(String jobId, int attempt, long t) {
        PreemptedRun p = preempting.get(jobId);
        return p != null && p.attempt() == attempt && t < p.expiresMillis();
    }

    /** The attempt's quota was released: it is no longer being preempted. */
    void released(String jobId, int attempt) {
        PreemptedRun p = preempting.get(jobId);
        if (p != null && p.attempt() == attempt) {
            preempting.remove(jobId);
        }
    }

    /** The attempt's pending stop (a JobPreempted fact not yet released), or null. */
    PreemptedRun preemption(String jobId, int attempt) {
        PreemptedRun p = preempting.get(jobId);
        return p != null && p.attempt() == attempt ? p : null;
    }

    /** Why a run that placement released with reason PREEMPTED is queued again. */
    String preemptionText(String jobId, int attempt) {
        PreemptedRun p = preempting.get(jobId);
        if (p == null || p.attempt() != attempt) {
            return "preempted";
        }
        return "preempted (" + p.reason() + (p.preemptor() == null ? "" : ") for job " + p.preemptor()) + ": "
                + p.message();
    }

    /** A tick: the next cycle looks for preemptions in every tree (minimum run times and grace periods end). */
    void timePassed() {
        timePassed = true;
    }

    /** Whether a tick came since the last cycle (then every tree is looked at); clears it. */
    boolean takeTimePassed() {
        boolean was = timePassed;
        timePassed = false;
        return was;
    }

    /** The runs still being preempted (released nor expired), by cohort tree; forgets expired ones. */
    Map<String, List<PreemptedRun>> stopping(long t) {
        Map<String, List<PreemptedRun>> out = new HashMap<>();
        var it = preempting.values().iterator();
        while (it.hasNext()) {
            PreemptedRun p = it.next();
            QuotaCharge c = ledger.charge(p.jobId(), p.attempt());
            if (t >= p.expiresMillis()) {
                it.remove();
            } else if (c != null) {
                out.computeIfAbsent(c.queue().tree, k -> new ArrayList<>()).add(p);
            }
        }
        return out;
    }

    /** A running attempt that may be preempted for a head, with why, and the work it would lose. */
    private record Victim(QuotaCharge charge, PreemptionReason reason, long lostWork) {
    }

    /**
     * Looks at the head of every queue of {@code looked} (queues of one tree) that quota keeps out, best standing
     * first, and preempts for the first one that a set of allowed victims would let in. At most one preemptor per
     * tree at a time: its victims' quota goes to it (a reservation) and nothing else is preempted there until they are
     * released. Whether it preempted.
     */
    boolean preemptIn(String treeName, List<ClusterQueue> looked, long t, AdmissionCycle.Decisions decisions) {
        FairShareConfig.Preemption rules = config.preemption();
        long cutoff = t - rules.minRunTime().toMillis();
        // what reclaim could give back at most: the borrowed amounts of queues with a run old enough to preempt
        // (only worth the walk over the tree when some blocked head stays within its nominal quota)
        long[] reclaimable = null;
        boolean anyWithinNominal = false;
        for (ClusterQueue q : looked) {
            anyWithinNominal |= !q.pendingInOrder.isEmpty() && tree.quotaFit(q.head()) == QuotaTree.NO_FIT
                    && tree.withinNominal(q.head());
        }
        if (rules.reclaim() != FairShareConfig.Reclaim.NEVER && anyWithinNominal) {
            for (ClusterQueue q : tree.trees.get(treeName)) {
                if (q.hasRunSince(cutoff)) {
                    for (int r = 0; r < q.usage.length; r++) {
                        if (q.has[r] && q.usage[r] > q.nominal[r]) {
                            reclaimable = reclaimable == null ? new long[q.usage.length] : reclaimable;
                            reclaimable[r] += q.usage[r] - q.nominal[r];
                        }
                    }
                }
            }
        }
        List<PendingJobEntry> heads = new ArrayList<>();
        for (ClusterQueue q : looked) {
            if (!q.pendingInOrder.isEmpty() && tree.quotaFit(q.head()) == QuotaTree.NO_FIT
                    && promising(q.head(), reclaimable, cutoff, t)) {
                heads.add(q.head());
            }
        }
        if (heads.isEmpty()) {
            return false;
        }
        Map<PendingJobEntry, Double> share = new IdentityHashMap<>();
        heads.forEach(h -> share.put(h, tree.weightedShare(h.queue(), t)));
        Comparator<DispatchPolicy.Candidate> cross = policy.crossQueueOrder();
        heads.sort((a, b) -> cross.compare(new DispatchPolicy.Candidate(a.view(), share.get(a)),
                new DispatchPolicy.Candidate(b.view(), share.get(b))));
        for (PendingJobEntry head : heads) {
            List<Victim> victims = victims(head, t);
            if (victims.isEmpty()) {
                continue;
            }
            for (Victim v : victims) {
                decisions.preempt(v.charge().jobId(), v.charge().attempt(), v.reason(), head.jobId(),
                        sentence(v, head, t));
            }
            return true;
        }
        return false;
    }

    /**
     * Cheap necessary conditions for a preemption in favour of {@code p}: a lower-priority run of its own queue old
     * enough, or enough borrowed quota with old enough runs to reclaim what it lacks, or fair-share preemption on.
     */
    private boolean promising(PendingJobEntry p, long[] reclaimable, long cutoff, long t) {
        FairShareConfig.Preemption rules = config.preemption();
        if (rules.overFairShare()) {
            return true;
        }
        ClusterQueue q = p.queue();
        if (rules.withinQueue() && q.hasRunSince(cutoff)
                && (q.runsBelow(p.view()) || q.runsAboveLevel(p.view(), cutoff, t))) {
            return true;
        }
        if (reclaimable == null || !tree.withinNominal(p)) {
            return false;
        }
        if (p.gpuMilli() > 0 && tree.gpuFlavour(p) == QuotaTree.NO_FIT) {
            boolean any = false;
            for (int f : p.candidates()) {
                any |= reclaimable[f] >= p.gpuMilli() - tree.available(q, f);
            }
            if (!any) {
                return false;
            }
        }
        int cpu = tree.cpu;
        int mem = tree.mem;
        return (p.cpu() <= tree.available(q, cpu) || reclaimable[cpu] >= p.cpu() - tree.available(q, cpu))
                && (p.mem() <= tree.available(q, mem) || reclaimable[mem] >= p.mem() - tree.available(q, mem));
    }

    /**
     * The cheapest set of runs whose quota lets {@code p} in: candidates by least work lost (GPU-seconds since the
     * run's last checkpoint, or since it started when it saved none), then lowest priority, then newest; taken until
     * {@code p} fits, then any that turned out not to be needed are given back. Empty when no allowed set is enough
     * (preempting then would gain nothing).
     */
    private List<Victim> victims(PendingJobEntry p, long t) {
        FairShareConfig.Preemption rules = config.preemption();
        long minRun = rules.minRunTime().toMillis();
        ClusterQueue own = p.queue();
        boolean gpuShort = p.gpuMilli() > 0 && tree.gpuFlavour(p) == QuotaTree.NO_FIT;
        boolean cpuShort = p.cpu() > tree.available(own, tree.cpu);
        boolean memShort = p.mem() > tree.available(own, tree.mem);
        boolean withinNominal = tree.withinNominal(p);
        // cheap necessary conditions first: most blocked heads have no possible victim at all
        boolean byPriority = rules.withinQueue()
                && (own.runsBelow(p.view()) || own.runsAboveLevel(p.view(), t - minRun, t));
        boolean byReclaim = rules.reclaim() != FairShareConfig.Reclaim.NEVER && withinNominal;
        if (!byPriority && !byReclaim && !rules.overFairShare()) {
            return List.of();
        }
        double preemptorShare = rules.overFairShare() ? shareWith(p, t) : 0;
        List<Victim> candidates = new ArrayList<>();
        for (ClusterQueue q : tree.trees.get(own.tree)) {
            if (q == own ? !byPriority : !rules.overFairShare() && !(byReclaim && tree.borrowsAnything(q))) {
                continue;
            }
            for (QuotaCharge c : q.runningSince(t - minRun)) {
                if (preempting.containsKey(c.jobId()) && preempting.get(c.jobId()).attempt() == c.attempt()) {
                    continue;
                }
                boolean helps = gpuShort && c.gpuMilli() > 0 && contains(p.candidates(), c.flavour())
                        || cpuShort && c.cpu() > 0 || memShort && c.mem() > 0;
                if (!helps) {
                    continue;
                }
                boolean lower = c.classValue() < p.view().classValue()
                        || c.classValue() == p.view().classValue() && c.priority() < p.view().priority();
                PreemptionReason reason = null;
                if (q == own) {
                    boolean same = c.classValue() == p.view().classValue() && c.priority() == p.view().priority();
                    // by service level only a run that saved a checkpoint in this attempt: it resumes from it, where
                    // one that saved none would start over, and a long job could then never finish
                    reason = !rules.withinQueue() ? null : lower ? PreemptionReason.PRIORITY
                            : same && own.yieldsByServiceLevel(c, p.view().level(), t)
                            && checkpoints.lastSavedMillis(c.jobId(), c.attempt()) != Long.MIN_VALUE
                            ? PreemptionReason.SERVICE_LEVEL : null;
                } else if (rules.reclaim() != FairShareConfig.Reclaim.NEVER && withinNominal && tree.borrowing(q, c)
                        && (rules.reclaim() == FairShareConfig.Reclaim.ANY || lower)) {
                    reason = PreemptionReason.RECLAIM;
                } else if (rules.overFairShare() && tree.weightedShare(q, t) > preemptorShare) {
                    reason = PreemptionReason.FAIR_SHARE;
                }
                if (reason != null) {
                    long since = Math.max(c.dispatchedMillis(), checkpoints.lastSavedMillis(c.jobId(), c.attempt()));
                    long lost = Math.max(0, t - since) * Math.max(1, c.gpuMilli());
                    candidates.add(new Victim(c, reason, lost));
                }
            }
        }
        if (candidates.isEmpty()) {
            return List.of();
        }
        // the lowest priority first (a higher one stopped instead would, requeued, stop the lower one anyway), then
        // the least work lost since the last checkpoint, then the newest
        candidates.sort(Comparator.comparingInt((Victim v) -> v.charge().classValue())
                .thenComparingInt(v -> v.charge().priority())
                .thenComparingLong(Victim::lostWork)
                .thenComparing(Comparator.comparingLong((Victim v) -> v.charge().dispatchedMillis()).reversed())
                .thenComparing(v -> v.charge().jobId()));
        List<Victim> chosen = new ArrayList<>();
        boolean fits = false;
        for (Victim v : candidates) {
            QuotaCharge c = v.charge();
            // a queue stops being a reclaim or fair-share victim once it is no longer above its line
            if (v.reason() == PreemptionReason.RECLAIM && !tree.borrowing(c.queue(), c)) {
                continue;
            }
            if (v.reason() == PreemptionReason.FAIR_SHARE && !staysAbove(c, preemptorShare, t)) {
                continue;
            }
            tree.add(c, -1, false);
            chosen.add(v);
            if (tree.quotaFit(p) != QuotaTree.NO_FIT) {
                fits = true;
                break;
            }
        }
        if (fits) {
            // give back, newest choice first, every victim p does not need after all
            for (int i = chosen.size() - 2; i >= 0; i--) {
                QuotaCharge c = chosen.get(i).charge();
                tree.add(c, 1, false);
                if (tree.quotaFit(p) != QuotaTree.NO_FIT) {
                    chosen.remove(i);
                } else {
                    tree.add(c, -1, false);
                }
            }
        }
        for (Victim v : chosen) {
            tree.add(v.charge(), 1, false);
        }
        return fits ? chosen : List.of();
    }

    private static boolean contains(int[] flavours, int f) {
        for (int x : flavours) {
            if (x == f) {
                return true;
            }
        }
        return false;
    }

    /** The preemptor's queue's weighted share if it were admitted. */
    private double shareWith(PendingJobEntry p, long t) {
        QuotaCharge tentative = new QuotaCharge(p.jobId(), 0, p.queue(), p.firstFlavour(), p.gpuMilli(), p.cpu(), p.mem(),
                t, null, 0, 0, 0);
        tree.add(tentative, 1, false);
        double s = tree.weightedShare(p.queue(), t);
        tree.add(tentative, -1, false);
        return s;
    }

    /** Whether the run's queue still stands above the preemptor's resulting share once the run is gone. */
    private boolean staysAbove(QuotaCharge c, double preemptorShare, long t) {
        tree.add(c, -1, false);
        double s = tree.weightedShare(c.queue(), t);
        tree.add(c, 1, false);
        return s >= preemptorShare;
    }

    /** The JobPreempted message: why this run is stopped, for whom. */
    private String sentence(Victim v, PendingJobEntry p, long t) {
        QuotaCharge c = v.charge();
        String what = c.gpuMilli() > 0 && c.flavour() >= 0 ? GpuShares.format(c.gpuMilli()) + " x "
                + tree.resources.get(c.flavour())
                : c.cpu() + " cpu millicores";
        return switch (v.reason()) {
            case RECLAIM -> "queue " + p.queue().name() + " reclaims " + what + " of its nominal quota lent to queue "
                    + c.queue().name() + " (for job " + p.jobId() + ")";
            case PRIORITY -> "job " + p.jobId() + " of higher priority in queue " + p.queue().name() + " needs "
                    + what;
            case FAIR_SHARE -> "queue " + c.queue().name() + " is above its fair share; queue " + p.queue().name()
                    + " needs " + what + " for job " + p.jobId();
            case SUSPENDED -> "suspended"; // never a victim's reason: suspension is asked for, not chosen
            case IDLE -> "idle"; // never a victim's reason either: decided from the run's utilisation
            case SERVICE_LEVEL -> "job " + p.jobId() + " at service level " + p.view().level() + " in queue "
                    + p.queue().name() + " needs " + what + "; this run reached level " + c.queue().level(c, t) + " with "
                    + String.format(java.util.Locale.ROOT, "%.1f", (c.attainedBefore() + c.gpuMilli()
                    * Math.max(0, t - c.dispatchedMillis())) / 3.6e9) + " GPU-hours of service";
        };
    }
}
