package io.gantry.admission.db;

import java.time.Instant;

/** A reported checkpoint as the read model keeps it. */
public record CheckpointRow(String eventId, String jobId, int attempt, long step, String path, Long sizeBytes,
                            Long saveMillis, Instant committedAt) {
}
