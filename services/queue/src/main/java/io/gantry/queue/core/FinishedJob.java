package io.gantry.queue.core;

/** A terminal job that holds no reservation: all the queue keeps of it is enough to ignore its late events. */
public record FinishedJob(String tenant, JobState status) {
}
