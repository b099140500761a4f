package io.gantry.admission.kafka;

import io.gantry.admission.core.AdmissionFact;
import io.gantry.admission.core.JobSpec;

import java.time.Instant;

/**
 * One event about a job as the read model stores it.
 *
 * @param spec        the job's spec where the event carries one (JobSubmitted, JobQueued, JobDispatched), else null
 * @param submittedAt when the job was submitted, where the event says so, else null
 * @param source      the topic it came from
 */
public record JobEvent(String jobId, String tenant, AdmissionFact fact, JobSpec spec, Instant submittedAt, String source) {
}
