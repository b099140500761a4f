package io.gantry.simulator.whatif;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSubmitted;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.kafka.WireMapping;
import io.gantry.runtime.kafka.TopicReader;
import io.gantry.schemas.Topics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an installation recorded, as a what-if replay needs it: every submission and cancellation with its time,
 * the nodes as they last registered, the queue configuration that was live, and how long each job's runs actually
 * took (so a replay runs real durations, not the specs' guesses).
 *
 * @param runSeconds per job, the duration of its last run that ended (success or failure), in whole seconds
 */
public record History(List<Submission> submissions, List<Cancellation> cancellations, List<NodeSpec> nodes,
                      String queueConfigYaml, Map<String, Long> runSeconds) {

    /** A job as it was submitted. */
    public record Submission(String jobId, String tenant, io.gantry.events.JobSpec spec, Instant at) {
    }

    public record Cancellation(String jobId, String tenant, Instant at) {
    }

    public History {
        submissions = List.copyOf(submissions);
        cancellations = List.copyOf(cancellations);
        nodes = List.copyOf(nodes);
        runSeconds = Map.copyOf(runSeconds);
    }

    /** Reads the history of a running (or restarted) installation from its Kafka cluster. */
    public static History fromKafka(String bootstrap) {
        return fromKafka(bootstrap, io.gantry.runtime.kafka.KafkaSecurity.NONE);
    }

    /** The same, connecting with {@code security} (a running installation's broker may ask for a password). */
    public static History fromKafka(String bootstrap, io.gantry.runtime.kafka.KafkaSecurity security) {
        return of(TopicReader.readAll(bootstrap, security, Topics.ADMISSION_JOB_EVENTS),
                TopicReader.readAll(bootstrap, security, Topics.PLACEMENT_NODE_EVENTS),
                TopicReader.readAll(bootstrap, security, Topics.QUEUE_CONFIG_EVENTS),
                TopicReader.readAll(bootstrap, security, Topics.PLACEMENT_ALLOCATION_EVENTS));
    }

    static History of(List<AdmissionJobEvent> admission, List<NodeEvent> nodeEvents, List<QueueConfigEvent> configs,
                      List<AllocationEvent> allocations) {
        List<Submission> submissions = new ArrayList<>();
        List<Cancellation> cancellations = new ArrayList<>();
        Map<String, Boolean> seen = new HashMap<>();
        for (AdmissionJobEvent e : admission) {
            if (e.getPayload() instanceof JobSubmitted s && seen.putIfAbsent(e.getJobId(), true) == null) {
                submissions.add(new Submission(e.getJobId(), s.getTenant(), s.getSpec(), e.getOccurredAt()));
            } else if (e.getPayload() instanceof JobCancelRequested c) {
                cancellations.add(new Cancellation(e.getJobId(), c.getTenant(), e.getOccurredAt()));
            }
        }
        submissions.sort(Comparator.comparing(Submission::at));
        Map<String, NodeSpec> nodes = new LinkedHashMap<>();
        for (NodeEvent e : nodeEvents) {
            if (e.getPayload() instanceof NodeRegistered r) {
                NodeSpec n;
                try {
                    n = WireMapping.node(e.getNodeId(), r);
                } catch (IllegalArgumentException invalid) {
                    // placement refused this registration too: the node never took work
                    continue;
                }
                // replayed on the simulated backend, whatever ran it for real
                nodes.put(e.getNodeId(), new NodeSpec(n.nodeId(), SimulatedBackend.NAME, n.gpus(), n.cpuMillis(),
                        n.memoryMiB(), n.labels(), n.numaCpuMillis(), n.rdmaNics(), n.numaMemoryMiB()));
            }
        }
        String yaml = null;
        for (QueueConfigEvent e : configs) {
            if (e.getPayload() instanceof QueueConfigApplied a) {
                yaml = a.getYaml();
            }
        }
        Map<String, Instant> started = new HashMap<>();
        Map<String, Long> runs = new HashMap<>();
        for (AllocationEvent e : allocations) {
            String key = e.getJobId() + "#";
            if (e.getPayload() instanceof JobRunStarted s) {
                started.put(key + s.getAttempt(), s.getStartedAt());
            } else if (e.getPayload() instanceof JobRunSucceeded s) {
                ended(runs, e.getJobId(), started.get(key + s.getAttempt()), s.getFinishedAt());
            } else if (e.getPayload() instanceof JobRunFailed f) {
                ended(runs, e.getJobId(), started.get(key + f.getAttempt()), f.getFinishedAt());
            }
        }
        return new History(submissions, cancellations, List.copyOf(nodes.values()), yaml, runs);
    }

    private static void ended(Map<String, Long> runs, String jobId, Instant start, Instant end) {
        if (start != null && end != null && !end.isBefore(start)) {
            runs.put(jobId, Math.max(1, Duration.between(start, end).toSeconds()));
        }
    }

    /** When the first recorded submission happened (the replay's time zero), or null for an empty history. */
    public Instant start() {
        return submissions.isEmpty() ? null : submissions.get(0).at();
    }
}
