package io.gantry.simulator.scenario;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobFailed;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.NodeFailed;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.log.LogDriver;
import io.gantry.simulator.whatif.VirtualSystem;
import io.gantry.runtime.log.VirtualClock;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Runs one scenario file: a cluster, the services' settings, timed steps (submit, cancel, fail or revive a node,
 * restart or crash a service) and the outcome expected of each job, on the production handlers of queue, placement
 * (simulated backend) and recovery over the in-memory log in virtual time. {@link #run} returns every mismatch as a
 * sentence; an empty list is a pass.
 */
final class ScenarioRunner {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private final Map<String, Object> scenario;
    private final VirtualClock clock = new VirtualClock(T0);
    private SimulatedBackend cluster;
    private LogDriver driver;

    private ScenarioRunner(Map<String, Object> scenario) {
        this.scenario = scenario;
    }

    static ScenarioRunner load(Path file) throws IOException {
        Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file));
        if (!(root instanceof Map<?, ?>)) {
            throw new IllegalArgumentException(file + ": expected a mapping");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) root;
        return new ScenarioRunner(map);
    }

    String description() {
        return String.valueOf(scenario.get("description"));
    }

    List<String> run() throws IOException {
        build();
        List<Map<String, Object>> steps = new ArrayList<>(list(scenario.get("steps")));
        steps.sort(Comparator.comparing(s -> seconds(s.get("at"))));
        for (Map<String, Object> step : steps) {
            driver.advanceTo(T0.plus(seconds(step.get("at"))));
            apply(step);
        }
        driver.advanceTo(T0.plus(seconds(scenario.get("runFor"))));
        return check();
    }

    // ------------------------------------------------------------------------------------------------------ setup

    private void build() throws IOException {
        Map<String, Object> c = map(scenario.get("cluster"));
        cluster = new SimulatedBackend(c.isEmpty() ? ClusterFile.defaultCluster() : ClusterFile.parse(new Yaml()
                .dump(Map.of("nodes", c.get("nodes")))));
        QueueConfig queue = new QueueConfig();
        Map<String, Object> q = map(scenario.get("queue"));
        if (q.get("defaultGpuQuota") != null) {
            queue.setDefaultGpuQuota(new java.math.BigDecimal(q.get("defaultGpuQuota").toString()));
        }
        if (q.get("quotas") != null) {
            // GPUs as people write them: 4, or 0.5 of a GPU
            Map<String, java.math.BigDecimal> quotas = new LinkedHashMap<>();
            map(q.get("quotas")).forEach((tenant, gpus) -> quotas.put(tenant, new java.math.BigDecimal(gpus.toString())));
            queue.setQuotas(quotas);
        }
        if (q.get("preemptionMinRunTime") != null) {
            queue.setPreemptionMinRunTime(String.valueOf(q.get("preemptionMinRunTime")));
        }
        if (q.get("preemptionGracePeriod") != null) {
            queue.setPreemptionGracePeriod(String.valueOf(q.get("preemptionGracePeriod")));
        }
        if (q.get("starvationWait") != null) {
            queue.setStarvationWait(String.valueOf(q.get("starvationWait")));
        }
        if (q.get("config") != null) {
            queue.setConfigFile(VirtualSystem.configFile(String.valueOf(q.get("config"))));
        }
        Map<String, Object> r = map(scenario.get("recovery"));
        RecoveryPolicy recovery = new RecoveryPolicy(
                duration(r.getOrDefault("heartbeatTimeout", "10s")),
                ((Number) r.getOrDefault("maxRestarts", 3)).intValue());
        PlacementPolicy policy = PlacementPolicy.valueOf(String.valueOf(map(scenario.get("placement"))
                .getOrDefault("policy", "binpack")).toUpperCase(Locale.ROOT));
        driver = new VirtualSystem(Duration.ofMillis(200), Duration.ofSeconds(1), recovery, Duration.ofSeconds(1))
                .start(clock, cluster, queue, policy);
    }

    private void apply(Map<String, Object> step) {
        if (step.get("submit") != null) {
            submit(map(step.get("submit")));
        } else if (step.get("cancel") != null) {
            String job = String.valueOf(step.get("cancel"));
            driver.publish(Topics.ADMISSION_JOB_EVENTS, job, AdmissionJobEvent.newBuilder()
                    .setEventId("cancel-" + job).setJobId(job).setOccurredAt(clock.instant())
                    .setPayload(new JobCancelRequested(tenantOf(job), tenantOf(job))).build());
        } else if (step.get("failNode") != null || step.get("failNodeOf") != null) {
            String node = step.get("failNode") != null ? String.valueOf(step.get("failNode"))
                    : nodesOf(String.valueOf(step.get("failNodeOf"))).iterator().next();
            driver.command(Service.PLACEMENT, out -> {
                cluster.fail(node);
                return null;
            });
        } else if (step.get("checkpoint") != null) {
            // as admission publishes a report the job's current run made with its run token
            Map<String, Object> c = map(step.get("checkpoint"));
            String job = String.valueOf(c.get("job"));
            int attempt = currentAttempt(job);
            long at = clock.instant().toEpochMilli();
            driver.publish(Topics.ADMISSION_CHECKPOINT_EVENTS, job, io.gantry.events.CheckpointEvent.newBuilder()
                    .setEventId("ckpt-" + job + "-" + at).setJobId(job).setOccurredAt(clock.instant())
                    .setPayload(io.gantry.events.CheckpointCommitted.newBuilder().setTenant(tenantOf(job))
                            .setAttempt(attempt).setStep(((Number) c.get("step")).longValue())
                            .setPath(String.valueOf(c.get("path"))).setReportedVia("api")
                            .setCommittedAt(clock.instant()).build())
                    .build());
        } else if (step.get("reviveNode") != null) {
            String node = String.valueOf(step.get("reviveNode"));
            driver.command(Service.PLACEMENT, out -> {
                cluster.revive(node);
                return null;
            });
        } else if (step.get("restart") != null) {
            driver.restart(service(step.get("restart")));
        } else if (step.get("restartFromSnapshot") != null) {
            if (driver.restartFromSnapshot(service(step.get("restartFromSnapshot"))) < 0) {
                throw new IllegalArgumentException(step.get("restartFromSnapshot") + " takes no snapshots");
            }
        } else if (step.get("crash") != null) {
            driver.crashDuringNextBatch(service(step.get("crash")));
        } else {
            throw new IllegalArgumentException("unknown step " + step);
        }
    }

    private final Map<String, String> tenants = new LinkedHashMap<>();

    private void submit(Map<String, Object> job) {
        String id = String.valueOf(job.get("id"));
        String tenant = String.valueOf(job.getOrDefault("tenant", "vision"));
        tenants.put(id, tenant);
        List<TaskSpec> tasks = new ArrayList<>();
        int i = 0;
        for (Object task : list(job.get("tasks"))) {
            Map<String, Object> t = map(task);
            Object run = t.get("runSeconds");
            tasks.add(TaskSpec.newBuilder().setName(String.valueOf(t.getOrDefault("name", "task-" + i++)))
                    .setReplicas(((Number) t.getOrDefault("replicas", 1)).intValue())
                    .setCommand(List.of("python", "train.py"))
                    .setGpus(((Number) t.getOrDefault("gpus", 0)).intValue())
                    .setGpuModel((String) t.get("gpuModel")).setCpuMillis(1000).setMemoryMiB(1024)
                    .setRunSeconds(run == null ? null : ((Number) run).longValue())
                    .setGpuMilli(t.get("gpuMilli") == null ? null : ((Number) t.get("gpuMilli")).intValue())
                    .build());
        }
        Object limit = job.get("timeLimitSeconds");
        JobSpec spec = JobSpec.newBuilder().setName(id)
                .setPriority(((Number) job.getOrDefault("priority", 0)).intValue())
                .setTimeLimitSeconds(limit == null ? null : ((Number) limit).longValue())
                .setQueue((String) job.get("queue")).setPriorityClass((String) job.get("priorityClass"))
                .setTasks(tasks).build();
        driver.publish(Topics.ADMISSION_JOB_EVENTS, id, AdmissionJobEvent.newBuilder().setEventId("submit-" + id)
                .setJobId(id).setOccurredAt(clock.instant()).setPayload(new JobSubmitted(tenant, spec, null))
                .build());
    }

    // ---------------------------------------------------------------------------------------------------- outcome

    private List<String> check() {
        List<String> problems = new ArrayList<>(unknownKeys());
        Map<String, Object> expect = map(scenario.get("expect"));
        map(expect.get("jobs")).forEach((job, e) -> checkJob(job, map(e), problems));
        if (expect.containsKey("nodesFailed")) {
            Set<String> failed = new LinkedHashSet<>();
            driver.values(Topics.RECOVERY_NODE_EVENTS).stream().filter(e -> e.getPayload() instanceof NodeFailed)
                    .forEach(e -> failed.add(e.getNodeId()));
            Set<String> wanted = new LinkedHashSet<>();
            list(expect.get("nodesFailed")).forEach(n -> wanted.add(String.valueOf(n)));
            if (!failed.equals(wanted)) {
                problems.add("nodes declared failed: " + failed + ", expected " + wanted);
            }
        }
        for (Service s : List.of(Service.QUEUE, Service.PLACEMENT, Service.RECOVERY)) {
            int dead = driver.log().entries(Topics.deadLetter(s).name()).size();
            if (dead > 0) {
                problems.add(s + " dead-lettered " + dead + " records: "
                        + driver.log().entries(Topics.deadLetter(s).name()).get(0).headers().get("gantry.error"));
            }
        }
        return problems;
    }

    private static final Set<String> SCENARIO_KEYS = Set.of("description", "cluster", "queue", "placement", "recovery",
            "steps", "runFor", "expect");
    private static final Set<String> EXPECT_KEYS = Set.of("jobs", "nodesFailed");
    private static final Set<String> JOB_KEYS = Set.of("state", "attempts", "dispatches", "atMostDispatches",
            "preempted", "failReason", "onOneNode", "notOn", "endedBetween", "resumedFrom", "requeuedFrom");

    /** A misspelt key would silently expect nothing: every key must be one the runner knows. */
    private List<String> unknownKeys() {
        List<String> problems = new ArrayList<>();
        scenario.keySet().stream().filter(k -> !SCENARIO_KEYS.contains(k))
                .forEach(k -> problems.add("unknown scenario key '" + k + "' (known: " + SCENARIO_KEYS + ")"));
        Map<String, Object> expect = map(scenario.get("expect"));
        expect.keySet().stream().filter(k -> !EXPECT_KEYS.contains(k))
                .forEach(k -> problems.add("unknown expect key '" + k + "' (known: " + EXPECT_KEYS + ")"));
        map(expect.get("jobs")).forEach((job, e) -> map(e).keySet().stream().filter(k -> !JOB_KEYS.contains(k))
                .forEach(k -> problems.add(job + ": unknown expectation '" + k + "' (known: " + JOB_KEYS + ")")));
        if (map(expect.get("jobs")).isEmpty()) {
            problems.add("expects nothing of any job");
        }
        return problems;
    }

    private void checkJob(String job, Map<String, Object> e, List<String> problems) {
        List<QueueJobEvent> lifecycle = driver.values(Topics.QUEUE_JOB_EVENTS).stream()
                .filter(x -> x.getJobId().equals(job)).toList();
        List<AllocationEvent> allocations = driver.values(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                .filter(x -> x.getJobId().equals(job)).toList();
        List<AllocationGranted> grants = allocations.stream().map(AllocationEvent::getPayload)
                .filter(AllocationGranted.class::isInstance).map(AllocationGranted.class::cast).toList();
        QueueJobEvent terminal = lifecycle.stream().filter(x -> x.getPayload() instanceof JobSucceeded
                || x.getPayload() instanceof JobFailed || x.getPayload() instanceof JobCancelled).findFirst()
                .orElse(null);
        long started = allocations.stream().filter(x -> x.getPayload() instanceof JobRunStarted).count();
        long released = allocations.stream().filter(x -> x.getPayload() instanceof AllocationReleased).count();
        String state = terminal == null ? (started > released ? "RUNNING" : "QUEUED")
                : terminal.getPayload() instanceof JobSucceeded ? "SUCCEEDED"
                : terminal.getPayload() instanceof JobFailed ? "FAILED" : "CANCELLED";
        expectEqual(job, "state", e.get("state"), state, problems);
        expectEqual(job, "attempts", e.get("attempts"), grants.stream().map(AllocationGranted::getAttempt)
                .distinct().count(), problems);
        expectEqual(job, "dispatches", e.get("dispatches"), lifecycle.stream()
                .filter(x -> x.getPayload() instanceof JobDispatched).count(), problems);
        expectEqual(job, "preempted", e.get("preempted"), driver.values(Topics.QUEUE_PREEMPTION_EVENTS).stream()
                .filter(x -> x.getJobId().equals(job) && x.getPayload() instanceof JobPreempted).count(), problems);
        if (e.containsKey("resumedFrom")) {
            List<JobDispatched> dispatched = lifecycle.stream().filter(x -> x.getPayload() instanceof JobDispatched)
                    .map(x -> (JobDispatched) x.getPayload()).toList();
            String last = dispatched.isEmpty() ? null : dispatched.get(dispatched.size() - 1).getResumeFrom();
            expectEqual(job, "resumedFrom", String.valueOf(e.get("resumedFrom")), String.valueOf(last), problems);
        }
        if (e.containsKey("requeuedFrom")) {
            // recovery's own decision: the checkpoint its JobRequeued names (the queue knows checkpoints too)
            List<String> requeues = driver.values(Topics.RECOVERY_JOB_EVENTS).stream()
                    .filter(x -> x.getJobId().equals(job) && x.getPayload() instanceof io.gantry.events.JobRequeued)
                    .map(x -> ((io.gantry.events.JobRequeued) x.getPayload()).getResumeFrom()).toList();
            expectEqual(job, "requeuedFrom", String.valueOf(e.get("requeuedFrom")),
                    String.valueOf(requeues.isEmpty() ? null : requeues.get(requeues.size() - 1)), problems);
        }
        if (e.get("atMostDispatches") != null && lifecycle.stream().filter(x -> x.getPayload() instanceof JobDispatched)
                .count() > ((Number) e.get("atMostDispatches")).longValue()) {
            problems.add(job + ": dispatched more than " + e.get("atMostDispatches") + " times");
        }
        if (e.get("failReason") != null) {
            String reason = terminal != null && terminal.getPayload() instanceof JobFailed f
                    ? String.valueOf(f.getReason()) : null;
            expectEqual(job, "failReason", e.get("failReason"), reason, problems);
        }
        if (Boolean.TRUE.equals(e.get("onOneNode")) && !grants.isEmpty()
                && grants.get(grants.size() - 1).getPlacements().stream().map(TaskPlacement::getNodeId).distinct()
                .count() != 1) {
            problems.add(job + ": expected all tasks on one node, got " + nodesOf(job));
        }
        if (e.get("notOn") != null && nodesOf(job).contains(String.valueOf(e.get("notOn")))) {
            problems.add(job + ": expected its last run off " + e.get("notOn") + ", got " + nodesOf(job));
        }
        if (e.get("endedBetween") != null) {
            List<Object> window = list(e.get("endedBetween"));
            Duration lo = seconds(window.get(0));
            Duration hi = seconds(window.get(1));
            Duration ended = terminal == null ? null : Duration.between(T0, terminal.getOccurredAt());
            if (ended == null || ended.compareTo(lo) < 0 || ended.compareTo(hi) > 0) {
                problems.add(job + ": expected to end between " + lo + " and " + hi + ", ended "
                        + (ended == null ? "never" : ended));
            }
        }
    }

    private static void expectEqual(String job, String what, Object expected, Object actual, List<String> problems) {
        if (expected == null) {
            return;
        }
        String want = String.valueOf(expected);
        String got = String.valueOf(actual);
        if (!want.equals(got)) {
            problems.add(job + ": " + what + " " + got + ", expected " + want);
        }
    }

    private Set<String> nodesOf(String job) {
        List<AllocationGranted> grants = driver.values(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                .filter(x -> x.getJobId().equals(job)).map(AllocationEvent::getPayload)
                .filter(AllocationGranted.class::isInstance).map(AllocationGranted.class::cast).toList();
        Set<String> nodes = new LinkedHashSet<>();
        if (!grants.isEmpty()) {
            grants.get(grants.size() - 1).getPlacements().forEach(p -> nodes.add(p.getNodeId()));
        }
        return nodes;
    }

    private int currentAttempt(String job) {
        return driver.values(Topics.PLACEMENT_ALLOCATION_EVENTS).stream().filter(x -> x.getJobId().equals(job))
                .map(AllocationEvent::getPayload).filter(AllocationGranted.class::isInstance)
                .mapToInt(p -> ((AllocationGranted) p).getAttempt()).max().orElse(1);
    }

    private String tenantOf(String job) {
        return tenants.getOrDefault(job, "vision");
    }

    // ---------------------------------------------------------------------------------------------------- parsing

    private static Service service(Object name) {
        return Service.valueOf(String.valueOf(name).toUpperCase(Locale.ROOT));
    }

    private static Duration seconds(Object value) {
        if (value instanceof Number n) {
            return Duration.ofMillis(Math.round(n.doubleValue() * 1000));
        }
        return duration(value);
    }

    private static Duration duration(Object value) {
        Duration d = FairShareConfig.parseDuration(String.valueOf(value));
        if (d == null) {
            throw new IllegalArgumentException("not a duration: " + value);
        }
        return d;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return value == null ? Map.of() : (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static <T> List<T> list(Object value) {
        return value == null ? List.of() : (List<T>) value;
    }
}
