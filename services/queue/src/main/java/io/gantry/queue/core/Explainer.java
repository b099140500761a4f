package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.util.ArrayList;
import java.util.List;

/**
 * The sentences of {@link WaitReason#NEVER_FITS} and {@link WaitReason#QUOTA}: why a pending job cannot be admitted,
 * with the numbers of its queue and cohort tree now. Users read them (JobWaiting, the pending list), and tests assert
 * them word for word. GPU amounts are kept in thousandths and said in GPUs ({@code 2.5}).
 */
final class Explainer {
    private final QuotaTree tree;
    private final FairShareConfig config;

    Explainer(QuotaTree tree, FairShareConfig config) {
        this.tree = tree;
        this.config = config;
    }

    // ------------------------------------------------------------------ NEVER_FITS

    /** The job's tenant has no such queue ({@code requested} null: no queue named after the tenant). */
    String noQueue(String tenant, String requested) {
        return requested == null
                ? "never fits: tenant " + tenant + " has no default queue '" + tenant + "'"
                : "never fits: tenant " + tenant + " has no queue '" + requested + "'";
    }

    String unknownClass(String priorityClass) {
        return "never fits: unknown priority class '" + priorityClass + "' (classes: "
                + String.join(", ", config.priorityClasses().keySet()) + ")";
    }

    /** No flavour of the queue matches the GPU models the job accepts (empty: any). */
    String noFlavourQuota(ClusterQueue q, List<String> models) {
        return "never fits: queue " + q.name() + " has no quota for GPU model(s) " + (models.isEmpty()
                ? "(any)" : String.join(", ", models));
    }

    /** The job asked for a pool none of whose GPU flavours the queue has quota for. */
    String noFlavourInPool(ClusterQueue q, String pool, List<String> flavours) {
        return "never fits: the job asks for pool " + pool + ", and queue " + q.name() + " has quota for no GPU "
                + "flavour of it (its flavours: " + String.join(", ", flavours) + ")";
    }

    /** The job needs more of resource {@code r} than {@code q} could get even in an idle cohort tree. */
    String neverEnough(ClusterQueue q, int r, long need) {
        if (r == tree.cpu) {
            return "never fits: job needs " + need + " cpu millicores, queue " + q.name() + " can get at most "
                    + tree.maxAvailable(q, r) + limitText(q, r);
        }
        if (r == tree.mem) {
            return "never fits: job needs " + need + " MiB memory, queue " + q.name() + " can get at most "
                    + tree.maxAvailable(q, r) + limitText(q, r);
        }
        if (tree.isImplicit(q, r)) {
            return "never fits: job needs " + gpus(need) + " GPUs, tenant " + q.def.tenant() + "'s quota is "
                    + gpus(q.nominal[r]);
        }
        return "never fits: job needs " + gpus(need) + " x " + tree.resources.get(r) + ", queue " + q.name()
                + " can get at most " + gpus(tree.maxAvailable(q, r)) + limitText(q, r);
    }

    private String limitText(ClusterQueue q, int r) {
        if (q.parent == null) {
            return " (nominal " + amount(r, q.nominal[r]) + ")";
        }
        return " (nominal " + amount(r, q.nominal[r]) + (q.borrowingLimit[r] >= 0 ? ", borrowing limit "
                + amount(r, q.borrowingLimit[r]) : "") + ", cohort " + q.cohortRootName() + ")";
    }

    /** An amount of resource {@code r} as people read it: GPUs from thousandths, CPU and memory as they are. */
    private String amount(int r, long v) {
        return r == tree.cpu || r == tree.mem ? Long.toString(v) : gpus(v);
    }

    private static String gpus(long milli) {
        return GpuShares.format(milli);
    }

    // ------------------------------------------------------------------ QUOTA

    /** What the preemptor of a tree waits for: its victims to stop. */
    String preempting(List<String> victims, PreemptionReason reason) {
        return "preempting: waiting for " + (victims.size() == 1 ? "job " : victims.size() + " jobs ")
                + String.join(", ", victims) + " to stop (" + reason + ")";
    }

    /** Why {@code p} is not admitted now, given its tree's reservation {@code res} (or null). */
    QueuedJob.Wait quota(PendingJobEntry p, Reservation res, long t) {
        QueuedJob.Wait why = quotaReason(p, res, t);
        return QueuedJob.Wait.quota(why.message() + serviceLevel(p), why.quotaWait());
    }

    /**
     * In an attained-service queue, for a job past the first level: why it stands behind jobs submitted after it
     * ("; service level 1 (1.30 GPU-hours received; lower levels go first)", as the pending list rounds it).
     */
    private static String serviceLevel(PendingJobEntry p) {
        int level = p.view().level();
        if (level == 0) {
            return "";
        }
        return String.format(java.util.Locale.ROOT, "; service level %d (%.2f GPU-hours received; lower levels go"
                + " first)", level, p.job().attained() / 3.6e9);
    }

    private QueuedJob.Wait quotaReason(PendingJobEntry p, Reservation res, long t) {
        if (res != null && res.job() == p && res.preemption() != null) {
            return QueuedJob.Wait.quota(res.preemption(), QuotaWait.PREEMPTING);
        }
        if (tree.quotaFit(p) != QuotaTree.NO_FIT) {
            if (res != null && res.job() != p) {
                return res.preemption() != null
                        ? QueuedJob.Wait.quota("waiting for quota: the free quota is reserved for job "
                        + res.job().jobId() + ", which preempted runs to get it; only jobs whose time limit ends"
                        + " before then may use it", QuotaWait.HELD_FOR_PREEMPTOR)
                        : QueuedJob.Wait.quota("waiting for quota: the free quota is reserved for starving job "
                        + res.job().jobId() + estimateText(res, t) + "; only jobs whose time limit ends before then,"
                        + " or that stay within their own queue's nominal quota, may use it",
                        QuotaWait.HELD_FOR_STARVING_JOB);
            }
            return QueuedJob.Wait.quota("waiting for its turn in queue " + p.queue().name(), QuotaWait.TURN);
        }
        ClusterQueue q = p.queue();
        int r;
        long need;
        if (p.gpuMilli() > 0 && tree.gpuFlavour(p) == QuotaTree.NO_FIT) {
            r = p.candidates()[0];
            need = p.gpuMilli();
        } else if (p.cpu() > tree.available(q, tree.cpu)) {
            r = tree.cpu;
            need = p.cpu();
        } else {
            r = tree.mem;
            need = p.mem();
        }
        QueuedJob.Wait why = describe(q, r, need);
        if (res != null && res.job() == p) {
            return QueuedJob.Wait.quota("reserved: " + why.message() + estimateText(res, t), QuotaWait.STARVING);
        }
        return why;
    }

    private String estimateText(Reservation res, long t) {
        if (res.estimateMillis() == null) {
            return " (no estimate: a running job it waits for has no time limit)";
        }
        long minutes = Math.max(0, (res.estimateMillis() - t + 59_999) / 60_000);
        return " (est. " + minutes + " min)";
    }

    private QueuedJob.Wait describe(ClusterQueue q, int r, long need) {
        String res = tree.resources.get(r);
        if (tree.isImplicit(q, r)) {
            return QueuedJob.Wait.quota("waiting for quota: tenant " + q.def.tenant() + " has " + gpus(q.usage[r])
                    + " of " + gpus(q.nominal[r]) + " GPUs reserved, job needs " + gpus(need), QuotaWait.OWN_QUOTA);
        }
        if (q.parent == null) {
            return QueuedJob.Wait.quota("waiting for quota: queue " + q.name() + " uses " + amount(r, q.usage[r])
                    + " of " + amount(r, q.nominal[r]) + " " + res + ", job needs " + amount(r, need),
                    QuotaWait.OWN_QUOTA);
        }
        if (q.borrowingLimit[r] >= 0 && q.usage[r] + need > q.nominal[r] + q.borrowingLimit[r]) {
            return QueuedJob.Wait.quota("waiting for quota: queue " + q.name() + " uses " + amount(r, q.usage[r])
                    + " " + res + " of nominal " + amount(r, q.nominal[r]) + " + borrowing limit "
                    + amount(r, q.borrowingLimit[r]) + ", job needs " + amount(r, need), QuotaWait.BORROWING_LIMIT);
        }
        StringBuilder s = new StringBuilder("waiting for quota: cohort ").append(q.cohortRootName()).append(" needs ")
                .append(amount(r, need)).append(" x ").append(res).append(", ").append(amount(r, tree.available(q, r)))
                .append(" free");
        if (q.usage[r] < q.nominal[r]) {
            List<String> borrowers = new ArrayList<>();
            long borrowed = 0;
            for (ClusterQueue other : tree.trees.get(q.tree)) {
                if (other != q && other.usage[r] > other.nominal[r]) {
                    borrowers.add(other.name());
                    borrowed += other.usage[r] - other.nominal[r];
                }
            }
            if (!borrowers.isEmpty()) {
                // what others hold of this queue's unused nominal, at most: not the whole nominal
                long lent = Math.min(q.nominal[r] - q.usage[r], borrowed);
                s.append(", ").append(amount(r, lent)).append(" of its nominal ").append(amount(r, q.nominal[r]))
                        .append(" lent to ").append(String.join(", ", borrowers));
                return QueuedJob.Wait.quota(s.toString(), QuotaWait.NOMINAL_LENT);
            }
        }
        return QueuedJob.Wait.quota(s.toString(), QuotaWait.COHORT_FULL);
    }
}
