package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Starvation reservations: in each cohort tree the job that preempted runs (while they stop), else the
 * highest-standing job blocked for the starvation wait, holds the quota it needs; others may take that quota only if
 * their time limit ends before its estimated start, or, against a starving job, if they stay within their own
 * queue's nominal quota ({@link #allowsBackfill}).
 */
final class StarvationGuard {
    private final QuotaTree tree;
    private final PendingIndex pending;
    private final DispatchPolicy policy;
    private final Explainer explainer;
    private final long starvationMillis;
    /** The job holding each tree's reservation as of the last cycle. */
    private final Map<String, String> lastReserved = new HashMap<>();

    StarvationGuard(QuotaTree tree, PendingIndex pending, DispatchPolicy policy, Explainer explainer,
                    FairShareConfig config) {
        this.tree = tree;
        this.pending = pending;
        this.policy = policy;
        this.explainer = explainer;
        this.starvationMillis = config.starvationWait().toMillis();
    }

    /** The job that held {@code treeName}'s reservation after the last cycle, or null. */
    String lastReserved(String treeName) {
        return lastReserved.get(treeName);
    }

    /** Records the tree's reservation after a cycle; returns the job that held it before, or null. */
    String remember(String treeName, Reservation r) {
        return r == null ? lastReserved.remove(treeName) : lastReserved.put(treeName, r.job().jobId());
    }

    /**
     * The tree's reservation: for the job that preempted runs of the tree while they stop, else for the
     * highest-standing job that waited at least the starvation wait and does not fit now.
     *
     * @param stopping the runs being preempted, by tree ({@link Preemptor#stopping})
     */
    Reservation reservation(String treeName, long t, Map<String, List<PreemptedRun>> stopping) {
        List<PreemptedRun> inTree = stopping.get(treeName);
        if (inTree != null) {
            for (PreemptedRun p : inTree) {
                PendingJobEntry preemptor = p.preemptor() == null ? null : pending.get(p.preemptor());
                if (preemptor != null && preemptor.queue().tree.equals(treeName)) {
                    long until = inTree.stream().mapToLong(PreemptedRun::expiresMillis).max().orElse(t);
                    List<String> victims = inTree.stream().map(PreemptedRun::jobId).toList();
                    return new Reservation(treeName, preemptor, preemptor.firstFlavour(), until,
                            explainer.preempting(victims, p.reason()));
                }
            }
        }
        return starvation(treeName, t);
    }

    /**
     * The highest-standing job of the tree that waited at least the starvation wait since it was last queued and does
     * not fit now.
     */
    private Reservation starvation(String treeName, long t) {
        PendingJobEntry best = null;
        DispatchPolicy.Candidate bestC = null;
        for (ClusterQueue q : tree.trees.get(treeName)) {
            if (q.pendingInOrder.isEmpty()) {
                continue;
            }
            PendingJobEntry head = q.head();
            // counted from when it was last queued: a run put back (preempted, stopped for a drain) has not starved
            if (t - head.job().queuedAt().toEpochMilli() < starvationMillis
                    || tree.quotaFit(head) != QuotaTree.NO_FIT) {
                continue;
            }
            DispatchPolicy.Candidate c = new DispatchPolicy.Candidate(head.view(), tree.weightedShare(q, t));
            if (bestC == null || policy.crossQueueOrder().compare(c, bestC) < 0) {
                best = head;
                bestC = c;
            }
        }
        if (best == null) {
            return null;
        }
        int flavour = best.firstFlavour();
        return new Reservation(treeName, best, flavour, estimate(best, flavour), null);
    }

    /**
     * The reservation {@code r} after an admission in its tree: a starving job's estimate counts the running jobs,
     * so an admission with a time limit can move it later (one without makes it unknown). {@code r} itself when
     * nothing changed, and for a preemptor's reservation (its estimate is when its victims' grace ends) or one
     * without an estimate (an admission cannot make it known).
     */
    Reservation refreshed(Reservation r) {
        if (r.preemption() != null || r.estimateMillis() == null) {
            return r;
        }
        Long estimate = estimate(r.job(), r.flavour());
        return java.util.Objects.equals(estimate, r.estimateMillis()) ? r
                : new Reservation(r.tree(), r.job(), r.flavour(), estimate, null);
    }

    /**
     * When enough running jobs of the tree will have ended (by their time limits) for the reserved job to fit; null
     * when that cannot be known (a job it would wait for has no time limit).
     */
    private Long estimate(PendingJobEntry r, int flavour) {
        int cpu = tree.cpu;
        int mem = tree.mem;
        int resource = flavour >= 0 ? flavour : r.cpu() > 0 ? cpu : mem;
        long need = (flavour >= 0 ? r.gpuMilli() : resource == cpu ? r.cpu() : r.mem()) - tree.available(r.queue(), resource);
        if (need <= 0) {
            return null;
        }
        // only runs with a time limit can end by a known time: unless they hold enough, the start cannot be known
        // (runs rarely carry limits, and this is asked every cycle: the sort below is then skipped)
        List<QuotaCharge> ending = new ArrayList<>();
        long endingAmount = 0;
        for (ClusterQueue q : tree.trees.get(r.queue().tree)) {
            for (QuotaCharge c : q.running) {
                long amount = c.amount(resource, cpu, mem);
                if (amount > 0 && c.endMillis() != Long.MAX_VALUE) {
                    ending.add(c);
                    endingAmount += amount;
                }
            }
        }
        if (endingAmount < need) {
            return null;
        }
        ending.sort(Comparator.comparingLong(QuotaCharge::endMillis));
        long freed = 0;
        for (QuotaCharge c : ending) {
            freed += c.amount(resource, cpu, mem);
            if (freed >= need) {
                return c.endMillis();
            }
        }
        return null; // not reached: the runs with a time limit hold at least what is needed
    }

    /**
     * Whether admitting {@code p} on flavour {@code f} leaves the reserved job's quota alone, or {@code p} ends (by
     * its time limit) before the reserved job is expected to start, or the reservation is a starving job's and
     * {@code p}, of another queue, stays within its own queue's nominal quota. That nominal quota is its queue's
     * guarantee: a starving job may only borrow what other queues leave unused, and holding another queue's job back
     * from its own quota made that queue wait for the starving job's borrowing (on contended Philly replays, a
     * tenant's one-GPU jobs waited hours behind another tenant's gang). A preemptor's reservation is different: the
     * quota its victims free was taken for it, and handing it to another job would waste their preemption.
     */
    boolean allowsBackfill(PendingJobEntry p, int f, Reservation res, long t) {
        if (res.preemption() == null && p.queue() != res.job().queue() && tree.withinNominal(p, f)) {
            return true;
        }
        long[] before = reservedAvailability(res);
        QuotaCharge tentative = new QuotaCharge(p.jobId(), 0, p.queue(), f, p.gpuMilli(), p.cpu(), p.mem(), t,
                p.timeLimitSeconds(), 0, 0, 0);
        tree.add(tentative, 1, false);
        long[] after = reservedAvailability(res);
        tree.add(tentative, -1, false);
        boolean touches = false;
        for (int i = 0; i < before.length; i++) {
            touches |= after[i] < before[i];
        }
        if (!touches) {
            return true;
        }
        return p.timeLimitSeconds() != null && res.estimateMillis() != null
                && t + p.timeLimitSeconds() * 1000 <= res.estimateMillis();
    }

    private long[] reservedAvailability(Reservation res) {
        PendingJobEntry r = res.job();
        return new long[] {
                res.flavour() >= 0 ? tree.available(r.queue(), res.flavour()) : 0,
                r.cpu() > 0 ? tree.available(r.queue(), tree.cpu) : 0,
                r.mem() > 0 ? tree.available(r.queue(), tree.mem) : 0};
    }
}
