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

    /** Seconds after the test epoch. */
    JobBuilder submittedAt(long second) {
        this.submittedAtSecond = second;
        return this;
    }

    String id() {
        return jobId;
    }

    String tenantName() {
        return tenant;
    }

    JobSpec spec() {
        return new JobSpec(jobId + "-name", 0, null,
                List.of(new TaskGroup("worker", replicas, List.of("train"), gpusPerTask, null, 1000, 1024, 60L)));
    }

    Instant submitTime() {
        return EPOCH.plusSeconds(submittedAtSecond);
    }

    Input.Submitted submitted() {
        return new Input.Submitted(jobId, tenant, spec(), submitTime());
    }

    QueueFact.JobQueued queued() {
        JobSpec spec = spec();
        return new QueueFact.JobQueued(jobId, tenant, 1, spec, submitTime(), spec.gangGpus());
    }
}
