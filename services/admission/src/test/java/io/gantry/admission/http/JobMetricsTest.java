package io.gantry.admission.http;

import io.gantry.events.ReleaseReason;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The metrics' labels come from the job history's wording, and stay within their enums whatever it says. */
class JobMetricsTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "8 GPUs; queued again: preempted (RECLAIM) for job j-2: queue b reclaims its nominal quota | PREEMPTED",
            "8 GPUs; queued again: preempted | PREEMPTED",
            "8 GPUs | NODE_FAILED",
            "8 GPUs; queued again: something new | OTHER",
    })
    void aRequeueIsCountedUnderItsCause(String detail, String cause) {
        assertThat(JobMetrics.requeueCause(detail)).isEqualTo(cause);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "8 GPUs; queued again: preempted (RECLAIM) for job j-2: reclaimed | RECLAIM",
            "8 GPUs; queued again: preempted (FAIR_SHARE) for job j-2: over its share | FAIR_SHARE",
            "8 GPUs; queued again: preempted (PRIORITY): higher class | PRIORITY",
            "8 GPUs; queued again: preempted | OTHER",
            "8 GPUs; queued again: preempted (j-1) for job (x) | OTHER",
    })
    void aPreemptionIsCountedUnderItsReasonAndAnUnknownReasonIsOther(String detail, String reason) {
        assertThat(JobMetrics.preemptionReason(detail)).isEqualTo(reason);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "PREEMPTED | PREEMPTED",
            "NODE_FAILED: node n-1 failed | NODE_FAILED",
            "RUN_SUCCEEDED | RUN_SUCCEEDED",
            "a job id or any free text | OTHER",
    })
    void aReleaseReasonIsAnEnumSymbolOrOther(String detail, String label) {
        assertThat(JobMetrics.known(JobMetrics.reasonOf(detail), ReleaseReason.values())).isEqualTo(label);
    }
}
