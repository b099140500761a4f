package io.gantry.admission.core;

import io.gantry.admission.core.RunTokenCheck.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class RunTokenCheckTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            the current run's token on a live job                         | true  | true  | false | false | false | CURRENT_RUN
            the current run's token once the job ended                    | true  | true  | true  | false | false | RUN_FINISHED
            an unknown job looks like another job's                       | false | false | false | false | true  | NOT_THIS_RUN
            an earlier run's token                                        | true  | false | false | true  | false | NOT_THIS_RUN
            a token of no run of an ended job                             | true  | false | true  | false | true  | NOT_THIS_RUN
            a newer run's token on a live job: its start may be late      | true  | false | false | false | true  | NOT_KNOWN_YET
            another job's, a made-up or an older run's token, job live    | true  | false | false | false | false | NOT_THIS_RUN
            """)
    void decides(String description, boolean exists, boolean current, boolean ended, boolean earlier, boolean newer,
                 Verdict verdict) {
        assertThat(RunTokenCheck.decide(exists, current, ended, earlier, newer)).isEqualTo(verdict);
    }
}
