package io.gantry.queue;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobDependency;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.embedded.EmbeddedKafka;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The test plays admission and placement: it writes their records the way they would. */
final class Wire implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;

    Wire() {
        this(EmbeddedKafka.shared().bootstrapServers());
    }

    /** Writing to the broker at {@code bootstrap} (a test's own broker). */
    Wire(String bootstrap) {
        producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
    }

    <V> void send(Topic<V> topic, String key, V value) {
        sendRaw(topic, key, AvroWire.encode(topic, value));
    }

    void sendRaw(Topic<?> topic, String key, byte[] bytes) {
        try {
            producer.send(new ProducerRecord<>(topic.name(), key, bytes)).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    void submit(String jobId, String tenant, int gpusPerTask, int replicas) {
        submit(jobId, tenant, gpusPerTask, replicas, List.of(), false);
    }

    /** A job with dependencies (job id to condition), possibly submitted suspended. */
    void submit(String jobId, String tenant, int gpusPerTask, int replicas, List<JobDependency> dependencies,
                boolean suspend) {
        JobSpec spec = new JobSpec(jobId + "-name", 0, null, List.of(
                new TaskSpec("worker", replicas, List.of("train.py"), gpusPerTask, null, 1000, 1024L, 60L, List.of(), null, null, null, null,
                        java.util.Map.of(), null, null, List.of())), null, null, null, null, null, null, null,
                dependencies, suspend, null, true);
        send(Topics.ADMISSION_JOB_EVENTS, jobId, new AdmissionJobEvent(UUID.randomUUID().toString(), jobId,
                Instant.now(), new JobSubmitted(tenant, spec, null)));
    }

    /** Granted, started, succeeded and released: one whole successful run as placement reports it. */
    void runSucceeds(String jobId, String tenant, int attempt) {
        String allocationId = jobId + "-alloc-" + attempt;
        Instant t0 = Instant.now();
        List<TaskPlacement> placements = List.of(new TaskPlacement("worker", 0, "node-1", "H100", List.of(0), 1000, 1024L, List.of(), null, List.of(), List.of()));
        allocation(jobId, new AllocationGranted(allocationId, tenant, attempt, placements, t0, "simulated", null, null, "default"));
        allocation(jobId, new JobRunStarted(allocationId, tenant, attempt, t0));
        allocation(jobId, new JobRunSucceeded(allocationId, tenant, attempt, t0.plusSeconds(60)));
        allocation(jobId, new AllocationReleased(allocationId, tenant, attempt, ReleaseReason.RUN_SUCCEEDED, t0,
                t0.plusSeconds(60), placements, "simulated", List.of(), List.of()));
    }

    /** Granted and started (still running), as placement reports a run; returns when it started. */
    Instant runStarts(String jobId, String tenant, int attempt) {
        String allocationId = jobId + "-alloc-" + attempt;
        Instant t0 = Instant.now();
        allocation(jobId, new AllocationGranted(allocationId, tenant, attempt, PLACEMENTS, t0, "simulated", null, null,
                "default"));
        allocation(jobId, new JobRunStarted(allocationId, tenant, attempt, t0));
        return t0;
    }

    /** One utilisation window of the run: idle since {@code idleSince} (null: busy) when the window closed at {@code to}. */
    void utilisation(String jobId, String tenant, int attempt, Instant from, Instant to, Instant idleSince) {
        send(Topics.PLACEMENT_UTILISATION_EVENTS, jobId, io.gantry.events.UtilisationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(jobId).setOccurredAt(to)
                .setPayload(io.gantry.events.RunUtilisationSampled.newBuilder().setTenant(tenant).setAttempt(attempt)
                        .setAllocationId(jobId + "-alloc-" + attempt).setWindowFrom(from).setWindowTo(to)
                        .setHeldGpuMilli(1000).setUsedGpuMilli(idleSince == null ? 900 : 0).setSamples(10)
                        .setIdleSince(idleSince).build())
                .build());
    }

    /** Placement released the run with {@code reason} at {@code at}. */
    void released(String jobId, String tenant, int attempt, Instant granted, Instant at, ReleaseReason reason) {
        allocation(jobId, new AllocationReleased(jobId + "-alloc-" + attempt, tenant, attempt, reason, granted, at,
                PLACEMENTS, "simulated", List.of(), List.of()));
    }

    private static final List<TaskPlacement> PLACEMENTS = List.of(new TaskPlacement("worker", 0, "node-1", "H100",
            List.of(0), 1000, 1024L, List.of(), null, List.of(), List.of()));

    /** Granted, started, failed (exit 1) and released, as placement reports a failed run. */
    void runFails(String jobId, String tenant, int attempt) {
        String allocationId = jobId + "-alloc-" + attempt;
        Instant t0 = Instant.now();
        List<TaskPlacement> placements = List.of(new TaskPlacement("worker", 0, "node-1", "H100", List.of(0), 1000, 1024L, List.of(), null, List.of(), List.of()));
        allocation(jobId, new AllocationGranted(allocationId, tenant, attempt, placements, t0, "simulated", null, null, "default"));
        allocation(jobId, new JobRunFailed(allocationId, tenant, attempt, t0.plusSeconds(5), 1, "task worker exited 1",
                io.gantry.events.FailureReason.RUN_FAILED));
        allocation(jobId, new AllocationReleased(allocationId, tenant, attempt, ReleaseReason.RUN_FAILED, t0,
                t0.plusSeconds(5), placements, "simulated", List.of(), List.of()));
    }

    /** A suspend ({@code true}) or resume request, as admission writes it. */
    void suspension(String jobId, String tenant, boolean suspend) {
        send(Topics.ADMISSION_SUSPENSION_EVENTS, jobId, new io.gantry.events.SuspensionEvent(
                UUID.randomUUID().toString(), jobId, Instant.now(), suspend
                ? new io.gantry.events.JobSuspendRequested(tenant, "alice")
                : new io.gantry.events.JobResumeRequested(tenant, "alice")));
    }

    private void allocation(String jobId, Object payload) {
        send(Topics.PLACEMENT_ALLOCATION_EVENTS, jobId,
                new AllocationEvent(UUID.randomUUID().toString(), jobId, Instant.now(), payload));
    }

    /** billing's announcement of the tenant's budget for the current UTC month. */
    void budget(String tenant, String state, String action, String spent) {
        java.time.YearMonth month = java.time.YearMonth.now(java.time.ZoneOffset.UTC);
        send(Topics.BILLING_BUDGET_EVENTS, tenant, io.gantry.events.BudgetEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setTenant(tenant).setOccurredAt(java.time.Instant.now())
                .setPayload(io.gantry.events.BudgetStatusChanged.newBuilder().setTenant(tenant).setQueue(null)
                        .setMonth(month.toString())
                        .setPeriodFrom(month.atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant())
                        .setPeriodTo(month.plusMonths(1).atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant())
                        .setCurrency("EUR").setLimit("100.00").setSpent(spent).setThresholdPercent(100)
                        .setState(io.gantry.events.BudgetState.valueOf(state))
                        .setAction(io.gantry.events.BudgetAction.valueOf(action)).build())
                .build());
    }

    @Override
    public void close() {
        producer.close();
    }
}
