package io.gantry.queue.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Drives a core through inputs and keeps every fact it decided, like the Kafka adapter does. */
final class QueueDriver {
    final QueueCore core;
    final List<QueueFact> facts = new ArrayList<>();
    List<QueueFact> last = List.of();
    final FairShareConfig config;
    private final List<Instant> times = new ArrayList<>();
    private long second = 1000;

    private QueueDriver(FairShareConfig config) {
        this.config = config;
        this.core = new QueueCore(config);
    }

    static QueueDriver withQuota(int gpus) {
        return new QueueDriver(FairShareConfig.implicit(Quotas.uniform(gpus)));
    }

    static QueueDriver withQuotas(Quotas quotas) {
        return new QueueDriver(FairShareConfig.implicit(quotas));
    }

    static QueueDriver with(FairShareConfig config) {
        return new QueueDriver(config);
    }

    /** The time of the next input, as seconds after the test epoch (inputs otherwise advance one second each). */
    QueueDriver at(long secondsAfterEpoch) {
        this.second = secondsAfterEpoch;
        return this;
    }

    Instant now() {
        return JobBuilder.EPOCH.plusSeconds(second);
    }

    /** State as it was written before: facts replayed without running dispatch cycles. */
    QueueDriver given(QueueFact... history) {
        for (QueueFact f : history) {
            core.replay(f, now());
            facts.add(f);
            times.add(now());
        }
        return this;
    }

    QueueDriver apply(Input input) {
        Instant now = now();
        second++;
        last = core.apply(input, now);
        facts.addAll(last);
        last.forEach(f -> times.add(now));
        return this;
    }

    QueueDriver submit(JobBuilder... jobs) {
        for (JobBuilder j : jobs) {
            apply(j.submitted());
        }
        return this;
    }

    QueueDriver restored() {
        return apply(new Input.Restored());
    }

    QueueDriver cancel(String jobId) {
        return apply(new Input.CancelRequested(jobId, tenantOf(jobId), "a-user"));
    }

    QueueDriver suspend(String jobId) {
        return apply(new Input.SuspensionRequested(jobId, tenantOf(jobId), true, "alice"));
    }

    QueueDriver resume(String jobId) {
        return apply(new Input.SuspensionRequested(jobId, tenantOf(jobId), false, "alice"));
    }

    /**
     * Placement's utilisation window of the attempt ending at {@code windowToSecond} (seconds after the test epoch):
     * idle since {@code idleSinceSecond}, or busy when that is null. One GPU held.
     */
    QueueDriver window(String jobId, int attempt, long windowToSecond, Long idleSinceSecond) {
        return apply(new Input.UtilisationSampled(jobId, tenantOf(jobId), attempt,
                JobBuilder.EPOCH.plusSeconds(windowToSecond),
                idleSinceSecond == null ? null : JobBuilder.EPOCH.plusSeconds(idleSinceSecond), 1000,
                idleSinceSecond == null ? 800 : 0));
    }

    QueueDriver granted(String jobId, int attempt) {
        return apply(new Input.Granted(jobId, tenantOf(jobId), attempt));
    }

    QueueDriver deferred(String jobId, int attempt) {
        return apply(new Input.Deferred(jobId, tenantOf(jobId), attempt, DeferralCause.INSUFFICIENT_FREE_GPUS,
                "needs 8 GPUs on one node, largest free block is 4"));
    }

    QueueDriver succeeded(String jobId, int attempt) {
        return apply(new Input.RunSucceeded(jobId, tenantOf(jobId), attempt));
    }

    QueueDriver failed(String jobId, int attempt, String message) {
        return apply(new Input.RunFailed(jobId, tenantOf(jobId), attempt, message));
    }

    QueueDriver released(String jobId, int attempt, ReleaseCause reason) {
        return apply(new Input.Released(jobId, tenantOf(jobId), attempt, reason));
    }

    QueueDriver requeued(String jobId, int interruptedAttempt) {
        return apply(new Input.Requeued(jobId, tenantOf(jobId), interruptedAttempt, "node n1 failed; restart 1 of 3"));
    }

    QueueDriver abandoned(String jobId, int interruptedAttempt) {
        return apply(new Input.RecoveryAbandoned(jobId, tenantOf(jobId), interruptedAttempt,
                "restart limit 3 reached"));
    }

    QueueDriver capacityChanged() {
        return apply(new Input.CapacityChanged("node n9 registered"));
    }

    /** The run succeeded and placement released its allocation. */
    QueueDriver finished(String jobId) {
        int attempt = core.state().live().get(jobId).attempt();
        return succeeded(jobId, attempt).released(jobId, attempt, ReleaseCause.RUN_SUCCEEDED);
    }

    /** The latest JobWaiting written for the job, or null. */
    QueueFact.JobWaiting lastWait(String jobId) {
        List<QueueFact.JobWaiting> w = all(QueueFact.JobWaiting.class, jobId);
        return w.isEmpty() ? null : w.get(w.size() - 1);
    }

    /** The spec the job's latest dispatch handed to placement. */
    JobSpec dispatchedSpec(String jobId) {
        List<QueueFact.JobDispatched> d = all(QueueFact.JobDispatched.class, jobId);
        return d.get(d.size() - 1).spec();
    }

    /** Job ids in the order they were dispatched (all cycles). */
    List<String> dispatchOrder() {
        return facts.stream().filter(f -> f instanceof QueueFact.JobDispatched).map(QueueFact::jobId).toList();
    }

    long dispatchCount(String jobId) {
        return dispatchOrder().stream().filter(jobId::equals).count();
    }

    <T extends QueueFact> List<T> all(Class<T> type, String jobId) {
        return facts.stream().filter(type::isInstance).map(type::cast).filter(f -> f.jobId().equals(jobId)).toList();
    }

    List<QueueFact> lastMatching(Predicate<QueueFact> p) {
        return last.stream().filter(p).toList();
    }

    /** A new configuration applied now; its facts are kept like any other. */
    QueueDriver reconfigure(FairShareConfig next) {
        List<QueueFact> out = core.reconfigure(next, now());
        facts.addAll(out);
        out.forEach(f -> times.add(now()));
        return this;
    }

    /** A fresh core fed only the facts: what a restarted service would hold. */
    QueueCore rebuilt() {
        return rebuilt(config);
    }

    /** A fresh core given {@code first} (state restored from other services' topics), then fed the facts. */
    QueueCore rebuilt(java.util.function.Consumer<QueueCore> first) {
        QueueCore fresh = new QueueCore(config);
        first.accept(fresh);
        for (int i = 0; i < facts.size(); i++) {
            fresh.replay(facts.get(i), times.get(i));
        }
        return fresh;
    }

    /** A fresh core with {@code with} fed only the facts, each at the time it was decided (as the service replays). */
    QueueCore rebuilt(FairShareConfig with) {
        QueueCore fresh = new QueueCore(with);
        for (int i = 0; i < facts.size(); i++) {
            fresh.replay(facts.get(i), times.get(i));
        }
        return fresh;
    }

    private String tenantOf(String jobId) {
        for (QueueFact f : facts) {
            if (f.jobId().equals(jobId)) {
                return f.tenant();
            }
        }
        return "a";
    }
}
