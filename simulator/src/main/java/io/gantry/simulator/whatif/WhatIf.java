package io.gantry.simulator.whatif;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuShare;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobFailed;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.queue.config.QueueConfig;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.log.LogDriver;
import io.gantry.runtime.log.VirtualClock;
import io.gantry.schemas.Topics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Replays a recorded {@link History} through the production handlers of queue, placement (simulated backend with
 * the recorded nodes) and recovery, in virtual time, under a given queue configuration and placement policy: each
 * job is submitted (and cancelled) when it was, and runs as long as its recorded run took.
 */
public final class WhatIf {
    /** How the replayed system is set up. */
    public record Setup(String name, String queueConfigYaml, PlacementPolicy policy) {
    }

    /** What happened to one job in a replay. */
    public record JobOutcome(String jobId, String tenant, Instant submitted, Instant firstGrant, Instant ended,
                             String state, int preemptions, double gpuSeconds) {
        Duration waited() {
            return firstGrant == null ? null : Duration.between(submitted, firstGrant);
        }

        Duration completion() {
            return ended == null ? null : Duration.between(submitted, ended);
        }
    }

    /** A replay's result. */
    public record Result(Setup setup, List<JobOutcome> jobs, long clusterGpus, Duration makespan) {
    }

    private static final Duration STEP = Duration.ofHours(1);
    private static final VirtualSystem REPLAY = new VirtualSystem(Duration.ofSeconds(1), Duration.ofSeconds(30),
            new RecoveryPolicy(Duration.ofMinutes(2), 3), Duration.ofSeconds(10));
    private static final Duration MAX_AFTER_LAST_SUBMISSION = Duration.ofDays(60);

    private WhatIf() {
    }

    public static Result replay(History history, Setup setup) {
        Instant t0 = history.start();
        if (t0 == null) {
            return new Result(setup, List.of(), 0, Duration.ZERO);
        }
        VirtualClock clock = new VirtualClock(t0);
        SimulatedBackend cluster = new SimulatedBackend(history.nodes());
        QueueConfig queue = new QueueConfig();
        if (setup.queueConfigYaml() != null) {
            queue.setConfigFile(VirtualSystem.configFile(setup.queueConfigYaml()));
        }
        // a replay of days: heartbeats and ticks only as often as failure detection and run ends need
        LogDriver driver = REPLAY.start(clock, cluster, queue, setup.policy());

        List<Runnable> timeline = new ArrayList<>();
        List<Instant> times = new ArrayList<>();
        for (History.Submission s : history.submissions()) {
            times.add(s.at());
            timeline.add(() -> driver.publish(Topics.ADMISSION_JOB_EVENTS, s.jobId(), AdmissionJobEvent.newBuilder()
                    .setEventId("whatif-submit-" + s.jobId()).setJobId(s.jobId()).setOccurredAt(clock.instant())
                    .setPayload(new JobSubmitted(s.tenant(), withRunSeconds(s.spec(),
                            history.runSeconds().get(s.jobId())), null)).build()));
        }
        for (History.Cancellation c : history.cancellations()) {
            times.add(c.at());
            timeline.add(() -> driver.publish(Topics.ADMISSION_JOB_EVENTS, c.jobId(), AdmissionJobEvent.newBuilder()
                    .setEventId("whatif-cancel-" + c.jobId() + "-" + c.at().toEpochMilli()).setJobId(c.jobId())
                    .setOccurredAt(clock.instant()).setPayload(new JobCancelRequested(c.tenant(), c.tenant()))
                    .build()));
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparing(times::get));
        for (int i : order) {
            driver.advanceTo(times.get(i));
            timeline.get(i).run();
        }
        Instant last = times.stream().max(Comparator.naturalOrder()).orElse(t0);
        Instant deadline = last.plus(MAX_AFTER_LAST_SUBMISSION);
        while (clock.instant().isBefore(deadline) && !allEnded(driver, history)) {
            driver.advanceBy(STEP);
        }
        return result(driver, history, setup, cluster);
    }

    private static io.gantry.events.JobSpec withRunSeconds(io.gantry.events.JobSpec spec, Long recorded) {
        if (recorded == null) {
            return spec;
        }
        List<TaskSpec> tasks = spec.getTasks().stream()
                .map(t -> TaskSpec.newBuilder(t).setRunSeconds(recorded).build()).toList();
        return io.gantry.events.JobSpec.newBuilder(spec).setTasks(tasks).build();
    }

    private static boolean allEnded(LogDriver driver, History history) {
        long ended = driver.values(Topics.QUEUE_JOB_EVENTS).stream().filter(WhatIf::terminal)
                .map(QueueJobEvent::getJobId).distinct().count();
        return ended >= history.submissions().size();
    }

    private static boolean terminal(QueueJobEvent e) {
        return e.getPayload() instanceof JobSucceeded || e.getPayload() instanceof JobFailed
                || e.getPayload() instanceof JobCancelled;
    }

    private static Result result(LogDriver driver, History history, Setup setup, SimulatedBackend cluster) {
        Map<String, Instant> firstGrant = new HashMap<>();
        Map<String, Double> gpuSeconds = new HashMap<>();
        for (AllocationEvent e : driver.values(Topics.PLACEMENT_ALLOCATION_EVENTS)) {
            if (e.getPayload() instanceof AllocationGranted g) {
                firstGrant.merge(e.getJobId(), g.getGrantedAt(), (a, b) -> a.isBefore(b) ? a : b);
            } else if (e.getPayload() instanceof AllocationReleased r) {
                double seconds = Duration.between(r.getGrantedAt(), r.getReleasedAt()).toMillis() / 1000.0;
                double gpus = 0;
                for (TaskPlacement p : r.getPlacements()) {
                    gpus += p.getGpuIndices().size();
                    if (p.getGpuShares() != null) {
                        for (GpuShare s : p.getGpuShares()) {
                            gpus += s.getMilli() / 1000.0;
                        }
                    }
                }
                gpuSeconds.merge(e.getJobId(), gpus * seconds, Double::sum);
            }
        }
        Map<String, QueueJobEvent> ends = new HashMap<>();
        driver.values(Topics.QUEUE_JOB_EVENTS).stream().filter(WhatIf::terminal)
                .forEach(e -> ends.putIfAbsent(e.getJobId(), e));
        Map<String, Integer> preempted = new HashMap<>();
        for (QueuePreemptionEvent e : driver.values(Topics.QUEUE_PREEMPTION_EVENTS)) {
            if (e.getPayload() instanceof JobPreempted) {
                preempted.merge(e.getJobId(), 1, Integer::sum);
            }
        }
        List<JobOutcome> jobs = new ArrayList<>();
        Instant t0 = history.start();
        Instant lastEnd = t0;
        for (History.Submission s : history.submissions()) {
            QueueJobEvent end = ends.get(s.jobId());
            String state = end == null ? "UNFINISHED" : end.getPayload() instanceof JobSucceeded ? "SUCCEEDED"
                    : end.getPayload() instanceof JobFailed ? "FAILED" : "CANCELLED";
            Instant ended = end == null ? null : end.getOccurredAt();
            if (ended != null && ended.isAfter(lastEnd)) {
                lastEnd = ended;
            }
            jobs.add(new JobOutcome(s.jobId(), s.tenant(), s.at(), firstGrant.get(s.jobId()), ended, state,
                    preempted.getOrDefault(s.jobId(), 0), gpuSeconds.getOrDefault(s.jobId(), 0.0)));
        }
        long gpus = cluster.nodes().stream().mapToLong(n -> n.gpus().size()).sum();
        return new Result(setup, jobs, gpus, Duration.between(t0, lastEnd));
    }

    // -------------------------------------------------------------------------------------------------- the report

    /** The two replays side by side, overall and per tenant, as Markdown. */
    public static String report(History history, Result recorded, Result alternative) {
        StringBuilder out = new StringBuilder();
        out.append("# What if: ").append(alternative.setup().name()).append(" instead of ")
                .append(recorded.setup().name()).append("\n\n");
        long tenants = history.submissions().stream().map(History.Submission::tenant).distinct().count();
        out.append("- history: ").append(count(history.submissions().size(), "job")).append(" of ")
                .append(count(tenants, "tenant")).append(", submitted from ").append(history.start()).append("; ")
                .append(count(history.cancellations().size(), "cancellation")).append("\n");
        out.append("- cluster: ").append(history.nodes().size()).append(" nodes, ").append(recorded.clusterGpus())
                .append(" GPUs (as they last registered), simulated\n");
        out.append("- run times: the recorded duration for ").append(count(history.runSeconds().size(), "job"))
                .append("; the spec's runSeconds (or the simulated default) for the rest\n");
        out.append("- both columns are replays through the production queue, placement and recovery handlers in ")
                .append("virtual time (so they differ only by the configuration)\n\n");
        out.append("| | ").append(recorded.setup().name()).append(" | ").append(alternative.setup().name())
                .append(" | change |\n|---|---|---|---|\n");
        row(out, "jobs ended", ended(recorded), ended(alternative), false);
        row(out, "avg wait (s)", avg(recorded.jobs(), JobOutcome::waited), avg(alternative.jobs(), JobOutcome::waited),
                true);
        row(out, "p95 wait (s)", p95(recorded.jobs(), JobOutcome::waited), p95(alternative.jobs(), JobOutcome::waited),
                true);
        row(out, "avg JCT (s)", avg(recorded.jobs(), JobOutcome::completion),
                avg(alternative.jobs(), JobOutcome::completion), true);
        row(out, "preemptions", preemptions(recorded.jobs()), preemptions(alternative.jobs()), false);
        row(out, "makespan (s)", recorded.makespan().toSeconds(), alternative.makespan().toSeconds(), true);
        row(out, "utilisation (%)", utilisation(recorded), utilisation(alternative), false);
        out.append("\nPer tenant (recorded configuration -> alternative):\n\n")
                .append("| tenant | jobs | avg wait (s) | avg JCT (s) | GPU-hours | preemptions |\n|---|---|---|---|---|---|\n");
        Map<String, List<JobOutcome>> a = byTenant(recorded.jobs());
        Map<String, List<JobOutcome>> b = byTenant(alternative.jobs());
        for (String tenant : a.keySet()) {
            List<JobOutcome> x = a.get(tenant);
            List<JobOutcome> y = b.getOrDefault(tenant, List.of());
            out.append("| ").append(tenant).append(" | ").append(x.size())
                    .append(" | ").append(fmt(avg(x, JobOutcome::waited))).append(" -> ").append(fmt(avg(y, JobOutcome::waited)))
                    .append(" | ").append(fmt(avg(x, JobOutcome::completion))).append(" -> ")
                    .append(fmt(avg(y, JobOutcome::completion)))
                    .append(" | ").append(fmt(gpuHours(x))).append(" -> ").append(fmt(gpuHours(y)))
                    .append(" | ").append(fmt(preemptions(x))).append(" -> ").append(fmt(preemptions(y))).append(" |\n");
        }
        return out.toString();
    }

    private static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    private static void row(StringBuilder out, String what, double a, double b, boolean lowerIsBetter) {
        String change = a == 0 ? (b == 0 ? "=" : "+" + fmt(b)) : String.format(Locale.ROOT, "%+.1f%%", 100 * (b - a) / a);
        out.append("| ").append(what).append(" | ").append(fmt(a)).append(" | ").append(fmt(b)).append(" | ")
                .append(change).append(" |\n");
    }

    private static Map<String, List<JobOutcome>> byTenant(List<JobOutcome> jobs) {
        Map<String, List<JobOutcome>> m = new TreeMap<>();
        jobs.forEach(j -> m.computeIfAbsent(j.tenant(), t -> new ArrayList<>()).add(j));
        return m;
    }

    static double avg(List<JobOutcome> jobs, java.util.function.Function<JobOutcome, Duration> f) {
        return jobs.stream().map(f).filter(java.util.Objects::nonNull).mapToLong(Duration::toMillis).average()
                .orElse(0) / 1000.0;
    }

    static double p95(List<JobOutcome> jobs, java.util.function.Function<JobOutcome, Duration> f) {
        List<Long> v = jobs.stream().map(f).filter(java.util.Objects::nonNull).map(Duration::toMillis).sorted()
                .toList();
        return v.isEmpty() ? 0 : v.get((int) Math.min(v.size() - 1, Math.ceil(0.95 * v.size()) - 1)) / 1000.0;
    }

    private static double ended(Result r) {
        return r.jobs().stream().filter(j -> j.ended() != null).count();
    }

    private static double preemptions(List<JobOutcome> jobs) {
        return jobs.stream().mapToInt(JobOutcome::preemptions).sum();
    }

    private static double gpuHours(List<JobOutcome> jobs) {
        return jobs.stream().mapToDouble(JobOutcome::gpuSeconds).sum() / 3600.0;
    }

    static double utilisation(Result r) {
        double capacity = r.clusterGpus() * (double) r.makespan().toSeconds();
        return capacity == 0 ? 0 : 100 * r.jobs().stream().mapToDouble(JobOutcome::gpuSeconds).sum() / capacity;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.1f", v);
    }
}
