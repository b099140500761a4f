package io.gantry.admission.db;

import io.gantry.admission.core.JobStatus;

import java.time.Instant;

/**
 * A row of the read model.
 *
 * @param spec the spec as a JSON tree (see {@link io.gantry.admission.core.JobSpecTree}), or null while unknown
 */
public record JobRecord(String jobId, String tenant, String name, Object spec, Instant submittedAt,
                        Instant updatedAt, JobStatus status) {
}
