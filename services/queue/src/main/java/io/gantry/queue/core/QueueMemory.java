package io.gantry.queue.core;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;

/**
 * What the queue remembers of its history besides its live jobs: the time of the newest thing it heard, every tenant
 * it has seen, the jobs that ended (enough to ignore their late events and to judge dependencies on them), each
 * queue's decayed usage and the job placement is reserving capacity for. With the facts of the live jobs replayed
 * after it ({@link QueueCore#restoreMemory}), it rebuilds the state the whole history leaves: what a snapshot keeps,
 * so a start does not read every fact ever decided.
 *
 * <p>Parts of it may be restored one after the other (a long list of ended jobs is written in pieces): each adds to
 * what the previous ones restored.
 *
 * @param clock          the time of the newest input or fact (usage accrues up to it), or null in a part that does
 *                       not say
 * @param tenants        every tenant that has had a job
 * @param finished       the jobs that ended and hold nothing, by job id, in no particular order (from
 *                       {@link QueueCore#memory} a read-only view of the core's own map: read it before the core
 *                       takes its next input)
 * @param usage          each queue's decayed usage history, in the order the queues were made (implicit queues are
 *                       made on first use, and that order breaks ties)
 * @param capacityReservedFor the job (and attempt) placement is reserving capacity for, or null
 */
public record QueueMemory(Instant clock, SortedSet<String> tenants, Map<String, FinishedJob> finished,
                          List<QueueUsage> usage, ReservedFor capacityReservedFor) {
    public QueueMemory {
        tenants = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(tenants));
        // not copied: a million ended jobs are read where they are, on the thread that owns the core
        finished = java.util.Collections.unmodifiableMap(finished);
        usage = List.copyOf(usage);
    }

    /**
     * A queue's decayed usage history: per resource its value up to {@code atMillis} ({@link Long#MIN_VALUE}: it has
     * never been charged).
     */
    public record QueueUsage(String tenant, String queue, Map<String, Double> history, long atMillis) {
        public QueueUsage {
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(queue, "queue");
            history = Map.copyOf(history);
        }
    }

    /** The job whose gang placement reserves capacity for, and which of its attempts. */
    public record ReservedFor(String jobId, int attempt) {
        public ReservedFor {
            Objects.requireNonNull(jobId, "jobId");
        }
    }
}
