package io.gantry.launcher.load;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * What the harness knows about each job: when its submission was scheduled and answered (HTTP side) and when its
 * events were seen on Kafka (watcher side). Either side may come first — a grant can be consumed before the
 * HTTP response carrying the job id has been read — so a job is "placed" when both halves are in.
 */
public final class JobLedger {
    /** One submission. Times are System.nanoTime() except the *Ts fields: Kafka record timestamps, epoch ms. */
    public static final class Job {
        public final long seq;
        public final long scheduledNanos;
        public final boolean measured;
        public volatile long responseNanos = -1;
        public volatile int status = -1;
        public volatile String error;
        public volatile String jobId;

        Job(long seq, long scheduledNanos, boolean measured) {
            this.seq = seq;
            this.scheduledNanos = scheduledNanos;
            this.measured = measured;
        }
    }

    /** The Kafka side of one job id. */
    public static final class Seen {
        public volatile long submittedTs = -1;
        public volatile long dispatchedTs = -1;
        public volatile long grantTs = -1;
        public volatile long grantNanos = -1;
        public volatile int grants;
        public volatile int deferrals;
        public volatile Job job;
        private boolean placed;
    }

    private final ConcurrentHashMap<String, Seen> seen = new ConcurrentHashMap<>();
    private final BiConsumer<Job, Seen> onPlaced;
    private final AtomicLong placed = new AtomicLong();

    public JobLedger(BiConsumer<Job, Seen> onPlaced) {
        this.onPlaced = onPlaced;
    }

    public Job newJob(long seq, long scheduledNanos, boolean measured) {
        return new Job(seq, scheduledNanos, measured);
    }

    /** The HTTP side: a 2xx answer named the job id. */
    public void accepted(Job job, String jobId) {
        job.jobId = jobId;
        Seen s = seen.computeIfAbsent(jobId, k -> new Seen());
        boolean fire;
        synchronized (s) {
            s.job = job;
            fire = s.grants > 0 && !s.placed;
            s.placed |= fire;
        }
        if (fire) {
            placed.incrementAndGet();
            onPlaced.accept(job, s);
        }
    }

    public void submitted(String jobId, long ts) {
        Seen s = seen.computeIfAbsent(jobId, k -> new Seen());
        if (s.submittedTs < 0) {
            s.submittedTs = ts;
        }
    }

    public void dispatched(String jobId, long ts) {
        Seen s = seen.computeIfAbsent(jobId, k -> new Seen());
        if (s.dispatchedTs < 0) {
            s.dispatchedTs = ts;
        }
    }

    /** Placement could not place the job now (PlacementDeferred): it waits for capacity. */
    public void deferred(String jobId) {
        Seen s = seen.computeIfAbsent(jobId, k -> new Seen());
        synchronized (s) {
            s.deferrals++;
        }
    }

    /** The Kafka side: an AllocationGranted for the job was consumed at {@code nanos}. */
    public void granted(String jobId, long ts, long nanos) {
        Seen s = seen.computeIfAbsent(jobId, k -> new Seen());
        boolean fire;
        synchronized (s) {
            s.grants++;
            if (s.grants == 1) {
                s.grantTs = ts;
                s.grantNanos = nanos;
            }
            fire = s.job != null && !s.placed;
            s.placed |= fire;
        }
        if (fire) {
            placed.incrementAndGet();
            onPlaced.accept(s.job, s);
        }
    }

    public Seen seen(String jobId) {
        return seen.get(jobId);
    }

    public Collection<Seen> all() {
        return seen.values();
    }

    /** Jobs of this run (answered 2xx) whose grant has been seen. */
    public long placed() {
        return placed.get();
    }
}
