package io.gantry.simulator.scenario;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The runner can fail: a wrong expectation, a misspelt key and an expectation of nothing are all reported. */
class ScenarioRunnerTest {
    private static List<String> run(String yaml) throws IOException {
        Path file = Files.createTempFile("scenario-", ".yml");
        Files.writeString(file, yaml);
        return ScenarioRunner.load(file).run();
    }

    @Test
    void aWrongExpectationIsReportedWithWhatHappenedInstead() throws IOException {
        assertThat(run("""
                description: wrong on purpose
                steps:
                  - {at: 0s, submit: {id: gang, tasks: [{replicas: 2, gpus: 4, runSeconds: 60}]}}
                runFor: 5m
                expect:
                  jobs:
                    gang: {state: FAILED, attempts: 2, endedBetween: [10s, 20s]}
                """)).containsExactly("gang: state SUCCEEDED, expected FAILED", "gang: attempts 1, expected 2",
                "gang: expected to end between PT10S and PT20S, ended PT1M");
    }

    @Test
    void aMisspeltKeyOrAnEmptyExpectationIsReported() throws IOException {
        assertThat(run("""
                description: misspelt
                steps:
                  - {at: 0s, submit: {id: gang, tasks: [{gpus: 1, runSeconds: 10}]}}
                runFor: 1m
                expect:
                  jobs:
                    gang: {stat: SUCCEEDED}
                """)).singleElement().asString().contains("unknown expectation 'stat'");
        assertThat(run("""
                description: empty
                runFor: 1m
                expect: {}
                """)).containsExactly("expects nothing of any job");
    }
}
