package io.gantry.admission.db;

import io.gantry.admission.core.AdmissionFact;
import io.gantry.admission.core.AdmissionFact.Kind;
import io.gantry.admission.core.JobStatus;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The read model's JSON of a job's status: what it keeps, and rows written before a field existed. */
class StatusJsonTest {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    private static JobStatus waitingForQuota() {
        return JobStatus.submitted()
                .apply(AdmissionFact.of("e1", T0, Kind.JOB_QUEUED, 1))
                .apply(AdmissionFact.of("e2", T0.plusSeconds(1), Kind.JOB_WAITING, 1).withReason("QUOTA")
                        .withMessage("waiting for quota: cohort c needs 8 x H100, 0 free").withCause("COHORT_FULL"));
    }

    @Test
    void aWaitKeepsItsTypedCause() {
        JobStatus s = waitingForQuota();

        JobStatus read = StatusJson.fromTree(StatusJson.toTree(s));

        assertThat(read).isEqualTo(s);
        assertThat(read.waitCause()).isEqualTo("COHORT_FULL");
    }

    @Test
    void aRowWrittenBeforeTheCauseWasKeptReadsAsNoCause() {
        Map<String, Object> tree = StatusJson.toTree(waitingForQuota());
        @SuppressWarnings("unchecked")
        Map<String, Object> waiting = new LinkedHashMap<>((Map<String, Object>) tree.get("waiting"));
        waiting.remove("cause");
        tree.put("waiting", waiting);

        JobStatus read = StatusJson.fromTree(tree);

        assertThat(read.waitReason()).isEqualTo("QUOTA");
        assertThat(read.waitCause()).isNull();
    }
}
