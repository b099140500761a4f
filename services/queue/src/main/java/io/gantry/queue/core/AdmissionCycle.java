package io.gantry.queue.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The admission cycle: over the cohort trees that changed, admit the best-standing admissible job (by the
 * {@link DispatchPolicy}) until none is left, let the {@link Preemptor} act for heads quota keeps out, then explain
 * the jobs that need a (new) explanation. After a cycle nothing pending fits, so the next one looks only at what
 * changed since.
 */
final class AdmissionCycle {
    /** How deep backfill looks into one request shape when its head is held back by CPU, memory or a reservation. */
    static final int SHAPE_DEPTH = 64;

    /** Where a cycle's decisions go: the core turns them into facts (and replays them, which updates the index). */
    interface Decisions {
        void dispatch(String jobId, String flavour);

        void waiting(String jobId, QueuedJob.Wait wait);

        void preempt(String jobId, int attempt, PreemptionReason reason, String preemptor, String message);

        /**
         * Whether the job, about to be dispatched, may be (and if so, it takes its room): false when it was woken to
         * fit in a place that the jobs dispatched before it in this cycle left too little of ({@link OnlyPlaces});
         * it then stays parked.
         */
        default boolean roomFor(String jobId) {
            return true;
        }
    }

    private final FairShareConfig config;
    private final DispatchPolicy policy;
    private final QuotaTree tree;
    private final PendingIndex pending;
    private final StarvationGuard guard;
    private final Preemptor preemptor;
    private final Explainer explainer;
    private final Comparator<PendingJobEntry> queueOrder;
    /** Per-flavour availability of the queue bestFit is looking at (one thread owns a core). */
    private final long[] scratch;

    AdmissionCycle(FairShareConfig config, DispatchPolicy policy, QuotaTree tree, PendingIndex pending,
                   StarvationGuard guard, Preemptor preemptor, Explainer explainer,
                   Comparator<PendingJobEntry> queueOrder) {
        this.config = config;
        this.policy = policy;
        this.tree = tree;
        this.pending = pending;
        this.guard = guard;
        this.preemptor = preemptor;
        this.explainer = explainer;
        this.queueOrder = queueOrder;
        this.scratch = new long[tree.resources.size()];
    }

    /**
     * One dispatch cycle over the cohort trees that changed (all of them when {@code all}): admit the best-standing
     * admissible job until none is left, then explain the jobs that need a (new) explanation.
     */
    void run(Instant now, boolean all, Decisions decisions) {
        long t = now.toEpochMilli();
        pending.promote(t);
        // starvation is checked in every tree on every cycle (a wait can run out while nothing else happens there);
        // a tree whose reservation changed is cycled like a changed one
        Map<String, Reservation> reservations = new HashMap<>();
        List<String> touched = new ArrayList<>();
        Map<String, List<PreemptedRun>> stopping = preemptor.stopping(t);
        for (String treeName : tree.trees.keySet()) {
            Reservation r = guard.reservation(treeName, t, stopping);
            if (r != null) {
                reservations.put(treeName, r);
            }
            String was = guard.lastReserved(treeName);
            String is = r == null ? null : r.job().jobId();
            if (all || tree.freedTrees.contains(treeName) || !Objects.equals(was, is)) {
                touched.add(treeName);
            }
        }
        // after every cycle nothing pending in a tree fits; only a tree whose availability grew (or whose
        // reservation changed) needs all its queues looked at, otherwise just the queues that gained jobs
        List<ClusterQueue> active = new ArrayList<>();
        for (String treeName : touched) {
            for (ClusterQueue q : tree.trees.get(treeName)) {
                if (!q.pendingInOrder.isEmpty()) {
                    active.add(q);
                }
            }
        }
        Set<String> touchedSet = new HashSet<>(touched);
        for (ClusterQueue q : pending.gainedJobs) {
            if (!touchedSet.contains(q.tree) && !q.pendingInOrder.isEmpty()) {
                active.add(q);
            }
        }
        Set<String> admitted = admit(active, reservations, t, decisions);
        Set<String> preempted = new TreeSet<>();
        boolean ticked = preemptor.takeTimePassed();
        if (config.preemption().enabled()) {
            boolean everywhere = ticked || all;
            Map<String, List<ClusterQueue>> changed = new TreeMap<>();
            if (!everywhere) {
                tree.usageChanged.addAll(pending.gainedJobs);
                for (ClusterQueue q : tree.usageChanged) {
                    changed.computeIfAbsent(q.tree, k -> new ArrayList<>()).add(q);
                }
                changed.values().forEach(l -> l.sort(Comparator.comparing(ClusterQueue::name)));
            }
            Set<String> looked = everywhere ? new TreeSet<>(tree.trees.keySet()) : changed.keySet();
            for (String treeName : looked) {
                if (!stopping.containsKey(treeName) && preemptor.preemptIn(treeName,
                        everywhere ? tree.trees.get(treeName) : changed.get(treeName), t, decisions)) {
                    preempted.add(treeName);
                    Reservation r = guard.reservation(treeName, t, preemptor.stopping(t));
                    if (r == null) {
                        reservations.remove(treeName);
                    } else {
                        reservations.put(treeName, r);
                    }
                    if (!touchedSet.contains(treeName)) {
                        touched.add(treeName);
                    }
                }
            }
        }
        explain(all, touched, reservations, admitted, t, decisions);
        pending.cycled();
        tree.freedTrees.clear();
        tree.usageChanged.clear();
        if (!preempted.isEmpty()) {
            // the preemptor's reservation replaced what the admissions above were held back by (a starvation
            // reservation without an estimate, say): admit again in those trees; they are stopping now, so this
            // pass preempts nothing and does not recurse
            tree.freedTrees.addAll(preempted);
            run(now, false, decisions);
        }
    }

    /**
     * Admits, best standing first, until no queue of {@code active} has an admissible job; returns the admitted ids.
     * Queues are visited best-first by (highest class pending, weighted share): once a queue cannot beat the best
     * candidate found so far, no later one can, so an admission usually looks at a handful of queues. The order is a
     * heap popped lazily into a visited prefix, so a cycle does not pay for sorting every queue.
     */
    private Set<String> admit(List<ClusterQueue> active, Map<String, Reservation> reservations, long t,
                              Decisions decisions) {
        for (ClusterQueue q : active) {
            q.cycleShare = tree.weightedShare(q, t);
            q.cycleClass = maxClass(q);
        }
        Comparator<ClusterQueue> byStanding = (a, b) -> {
            int c = Integer.compare(b.cycleClass, a.cycleClass);
            if (c != 0) {
                return c;
            }
            c = Double.compare(a.cycleShare, b.cycleShare);
            return c != 0 ? c : a.name().compareTo(b.name());
        };
        PriorityQueue<ClusterQueue> heap = new PriorityQueue<>(Math.max(1, active.size()), byStanding);
        heap.addAll(active);
        Set<ClusterQueue> inCycle = Collections.newSetFromMap(new IdentityHashMap<>());
        inCycle.addAll(active);
        List<ClusterQueue> visited = new ArrayList<>();
        Map<ClusterQueue, PendingJobEntry> cand = new IdentityHashMap<>();
        Set<ClusterQueue> exhausted = Collections.newSetFromMap(new IdentityHashMap<>());
        Comparator<DispatchPolicy.Candidate> cross = policy.crossQueueOrder();
        Set<String> admitted = new TreeSet<>();
        while (true) {
            PendingJobEntry best = null;
            DispatchPolicy.Candidate bestC = null;
            for (int i = 0; ; i++) {
                ClusterQueue q;
                if (i < visited.size()) {
                    q = visited.get(i);
                } else if (!heap.isEmpty()) {
                    q = heap.poll();
                    visited.add(q);
                } else {
                    break;
                }
                if (bestC != null) {
                    int bc = bestC.job().classValue();
                    if (q.cycleClass < bc || q.cycleClass == bc && q.cycleShare > bestC.weightedShare()) {
                        break; // neither this queue nor any after it can stand higher
                    }
                }
                if (exhausted.contains(q)) {
                    continue;
                }
                Reservation res = reservations.get(q.tree);
                PendingJobEntry p = cand.get(q);
                // availability only shrinks within a cycle: a cached candidate that still fits is still the best
                if (p == null || fit(p, res, t) == QuotaTree.NO_FIT) {
                    p = bestFit(q, res, t);
                    if (p == null) {
                        exhausted.add(q);
                        cand.remove(q);
                        continue;
                    }
                    cand.put(q, p);
                }
                DispatchPolicy.Candidate c = new DispatchPolicy.Candidate(p.view(), q.cycleShare);
                if (bestC == null || cross.compare(c, bestC) < 0) {
                    best = p;
                    bestC = c;
                }
            }
            if (best == null) {
                break;
            }
            ClusterQueue q = best.queue();
            int flavour = fit(best, reservations.get(q.tree), t);
            visited.remove(q); // its key changes: fewer pending jobs, a higher share; it goes back into the heap
            cand.remove(q);
            if (pending.unparking.contains(best.jobId()) && !decisions.roomFor(best.jobId())) {
                pending.repark(best.jobId()); // placement would defer it: parked again, nothing to explain
            } else {
                admitted.add(best.jobId());
                decisions.dispatch(best.jobId(), flavour >= 0 ? tree.resources.get(flavour) : null);
            }
            if (!q.pendingInOrder.isEmpty()) {
                q.cycleShare = tree.weightedShare(q, t);
                q.cycleClass = maxClass(q);
                heap.add(q);
            }
            Reservation res = reservations.get(q.tree);
            Reservation fresh = res == null ? null : guard.refreshed(res);
            if (fresh != res) {
                // the admission moved the starving job's estimated start later: a job whose time limit ends
                // before the new estimate may now backfill, in any queue of the tree (cached answers are stale)
                reservations.put(q.tree, fresh);
                for (ClusterQueue o : tree.trees.get(q.tree)) {
                    exhausted.remove(o);
                    cand.remove(o);
                    if (!o.pendingInOrder.isEmpty() && inCycle.add(o)) {
                        o.cycleShare = tree.weightedShare(o, t);
                        o.cycleClass = maxClass(o);
                        heap.add(o);
                    }
                }
            }
        }
        return admitted;
    }

    /** Explains the jobs that are new, unparked, or whose tree's reservation changed (every job when {@code all}). */
    private void explain(boolean all, List<String> touched, Map<String, Reservation> reservations,
                         Set<String> admitted, long t, Decisions decisions) {
        Set<String> explain = new TreeSet<>(pending.fresh);
        explain.addAll(pending.unparking);
        if (all) {
            explain.addAll(pending.schedulable.keySet());
            explain.addAll(pending.neverFits.keySet());
        }
        for (String treeName : touched) {
            Reservation r = reservations.get(treeName);
            String previous = guard.remember(treeName, r);
            if (previous != null) {
                explain.add(previous);
            }
            if (r != null) {
                explain.add(r.job().jobId());
            }
        }
        for (String id : explain) {
            if (admitted.contains(id)) {
                continue;
            }
            String never = pending.neverFits.get(id);
            PendingJobEntry p = pending.get(id);
            if (never != null) {
                decisions.waiting(id, new QueuedJob.Wait(WaitReason.NEVER_FITS, never));
            } else if (p != null) {
                decisions.waiting(id, explainer.quota(p, reservations.get(p.queue().tree), t));
            }
        }
    }

    private static int maxClass(ClusterQueue q) {
        return q.head().view().classValue();
    }

    /** The best-standing job of {@code q} that can be admitted now, or null. */
    private PendingJobEntry bestFit(ClusterQueue q, Reservation res, long t) {
        long[] avail = scratch;
        long maxMilli = 0;
        for (int f : q.gpuFlavours) {
            avail[f] = tree.available(q, f);
            maxMilli = Math.max(maxMilli, avail[f]);
        }
        PendingJobEntry best = null;
        for (Map.Entry<RequestShape, TreeSet<PendingJobEntry>> bucket : q.pendingByShape.entrySet()) {
            long gpuMilli = bucket.getKey().gpuMilli();
            if (gpuMilli > maxMilli) {
                break;
            }
            TreeSet<PendingJobEntry> jobs = bucket.getValue();
            PendingJobEntry head = jobs.first();
            if (best != null && queueOrder.compare(head, best) > 0) {
                continue; // the whole shape stands lower than the best so far
            }
            if (gpuMilli > 0 && !anyRoom(head.candidates(), avail, gpuMilli)) {
                continue; // every job of the shape needs the same GPUs
            }
            int scanned = 0;
            for (PendingJobEntry p : jobs) {
                if (best != null && queueOrder.compare(p, best) > 0) {
                    break; // the rest of the shape stands lower still
                }
                if (fit(p, res, t) != QuotaTree.NO_FIT) {
                    best = p;
                    break;
                }
                if (++scanned >= SHAPE_DEPTH) {
                    break;
                }
            }
        }
        return best;
    }

    private static boolean anyRoom(int[] candidates, long[] avail, long gpuMilli) {
        for (int f : candidates) {
            if (avail[f] >= gpuMilli) {
                return true;
            }
        }
        return false;
    }

    /** The flavour the job would be admitted on now, NO_GPU if it needs no GPUs, NO_FIT if it cannot be. */
    private int fit(PendingJobEntry p, Reservation res, long t) {
        int f = tree.quotaFit(p);
        if (f == QuotaTree.NO_FIT || res == null || res.job() == p || !res.tree().equals(p.queue().tree)) {
            return f;
        }
        return guard.allowsBackfill(p, f, res, t) ? f : QuotaTree.NO_FIT;
    }
}
