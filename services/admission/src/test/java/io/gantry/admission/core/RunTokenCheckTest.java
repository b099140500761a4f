package io.gantry.admission.core;

import io.gantry.admission.core.RunTokenCheck.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class RunTokenCheckTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            the current run's token on a live job                         | true  | true  | false | false | CURRENT_RUN
            the current run's token once the job ended                    | true  | true  | true  | false | RUN_FINISHED
            an unknown job looks like another job's                       | false | false | false | false | NOT_THIS_RUN
            an earlier run's token                                        | true  | false | false | true  | NOT_THIS_RUN
            a token of no run of an ended job                             | true  | false | true  | false | NOT_THIS_RUN
            a token of no known run of a live job: its start may be late  | true  | false | false | false | NOT_KNOWN_YET
            """)
    void decides(String description, boolean exists, boolean current, boolean ended, boolean earlier, Verdict verdict) {
        assertThat(RunTokenCheck.decide(exists, current, ended, earlier)).isEqualTo(verdict);
    }
}
