package io.gantry.admission.db;

import java.time.Instant;

/** One line of a job's history: an event, once. */
public record HistoryEntry(String type, Instant occurredAt, Integer attempt, String detail) {
}
