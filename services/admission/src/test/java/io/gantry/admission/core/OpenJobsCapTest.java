package io.gantry.admission.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OpenJobsCapTest {
    @Test
    void aNewJobIsRefusedOnceTheTenantHasTheMostOpenJobs() {
        OpenJobsCap cap = new OpenJobsCap(3);
        assertThat(cap.refusal("vision", 0)).isNull();
        assertThat(cap.refusal("vision", 2)).isNull();
        assertThat(cap.refusal("vision", 3)).isEqualTo("tenant vision has 3 jobs that have not ended, the most a "
                + "tenant may have open (3); submit again once some have ended, or cancel some");
        assertThat(cap.refusal("vision", 7)).startsWith("tenant vision has 7 jobs");
    }

    @Test
    void zeroIsNoCapAndANegativeOneIsRefused() {
        assertThat(new OpenJobsCap(0).refusal("vision", 1_000_000)).isNull();
        assertThatThrownBy(() -> new OpenJobsCap(-1)).hasMessageContaining("gantry.admission.max-open-jobs");
    }
}
