package io.gantry.queue.core;

import java.time.Instant;
import java.util.List;

/** Fluent test fixture: {@code aJob("j1").tenant("a").gpus(8).submittedAt(3)}. */
final class JobBuilder {
    static final Instant EPOCH = Instant.parse("2025-01-01T00:00:00Z");

    private final String jobId;
    private String tenant = "a";
    private int gpusPerTask = 1;
    private int replicas = 1;
    private long submittedAtSecond = 0;
    private String queue;
    private String priorityClass;
    private int priority;
    private Long timeLimitSeconds;
    private String gpuModel;
    private List<String> gpuModels = List.of();
    private int cpuMillis = 1000;
    private long memoryMiB = 1024;
    private Integer gpuMilli;
    private String migProfile;
    private String gpuTier;
    private RetryPolicy retry;
    private final List<Dependency> dependencies = new java.util.ArrayList<>();
    private boolean suspend;
    private String pool;
    private boolean interactive = true;

    private JobBuilder(String jobId) {
        this.jobId = jobId;
    }

    static JobBuilder aJob(String jobId) {
        return new JobBuilder(jobId);
    }

    JobBuilder tenant(String t) {
        this.tenant = t;
        return this;
    }

    /** GPUs of the whole gang (one task). */
    JobBuilder gpus(int g) {
        this.gpusPerTask = g;
        return this;
    }

    /** A gang of {@code n} tasks of {@code gpusEach}. */
    JobBuilder gang(int n, int gpusEach) {
        this.replicas = n;
        this.gpusPerTask = gpusEach;
        return this;
    }

    /** Each task takes {@code milli} thousandths of one GPU instead of whole GPUs. */
    JobBuilder fraction(int milli) {
        this.gpusPerTask = 0;
        this.gpuMilli = milli;
        this.migProfile = null;
        return this;
    }

    /** Each task takes a MIG instance of {@code profile} instead of whole GPUs. */
    JobBuilder mig(String profile) {
        this.gpusPerTask = 0;
        this.gpuMilli = null;
        this.migProfile = profile;
        return this;
    }

    /** Seconds after the test epoch. */
    JobBuilder submittedAt(long second) {
        this.submittedAtSecond = second;
        return this;
    }

    /** The queue asked for (default: the tenant's default queue). */
    JobBuilder queue(String q) {
        this.queue = q;
        return this;
    }

    JobBuilder priorityClass(String c) {
        this.priorityClass = c;
        return this;
    }

    JobBuilder priority(int p) {
        this.priority = p;
        return this;
    }

    /** Waits for each of {@code jobIds} to succeed (afterok). */
    JobBuilder after(String... jobIds) {
        for (String id : jobIds) {
            dependencies.add(new Dependency(id, Dependency.Condition.AFTER_OK));
        }
        return this;
    }

    /** Waits for {@code jobId} under {@code condition}. */
    JobBuilder after(Dependency.Condition condition, String jobId) {
        dependencies.add(new Dependency(jobId, condition));
        return this;
    }

    /** Asks for a placement pool. */
    JobBuilder pool(String pool) {
        this.pool = pool;
        return this;
    }

    /** A batch job (JobSpec.interactive false): never stopped for idling. */
    JobBuilder batch() {
        this.interactive = false;
        return this;
    }

    /** Submitted suspended. */
    JobBuilder suspended() {
        this.suspend = true;
        return this;
    }

    /** The job's retry policy for its own failures. */
    JobBuilder retry(int maxRetries, long backoffSeconds) {
        this.retry = new RetryPolicy(maxRetries, backoffSeconds);
        return this;
    }

    JobBuilder timeLimit(long seconds) {
        this.timeLimitSeconds = seconds;
        return this;
    }

    /** The one GPU model the job accepts. */
    JobBuilder model(String m) {
        this.gpuModel = m;
        return this;
    }

    /** The GPU tier (a set of models placement's configuration names) the job asks for. */
    JobBuilder tier(String t) {
        this.gpuTier = t;
        return this;
    }

    /** GPU models the job accepts, in order of preference. */
    JobBuilder models(String... m) {
        this.gpuModels = List.of(m);
        return this;
    }

    /** CPU millicores and memory MiB per task. */
    JobBuilder cpu(int millis, long mib) {
        this.cpuMillis = millis;
        this.memoryMiB = mib;
        return this;
    }

    String id() {
        return jobId;
    }

    String tenantName() {
        return tenant;
    }

    JobSpec spec() {
        return new JobSpec(jobId + "-name", priority, timeLimitSeconds,
                List.of(new TaskGroup("worker", replicas, gpusPerTask, gpuModel, cpuMillis, memoryMiB, gpuModels, gpuTier,
                        gpuMilli, migProfile)), queue, priorityClass, retry, dependencies, suspend, pool,
                interactive);
    }

    Instant submitTime() {
        return EPOCH.plusSeconds(submittedAtSecond);
    }

    Input.Submitted submitted() {
        return new Input.Submitted(jobId, tenant, spec(), submitTime());
    }

    QueueFact.JobQueued queued() {
        JobSpec spec = spec();
        return new QueueFact.JobQueued(jobId, tenant, 1, spec, submitTime(), spec.gangMilli());
    }
}
