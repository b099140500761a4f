package io.gantry.simulator.scenario;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every file in {@code src/test/resources/scenarios}: a small cluster, a timed story and the outcome expected of each
 * job, run on the production handlers in virtual time (milliseconds per file). Add a file to add a case.
 */
class ScenarioTest {
    static Stream<Path> scenarios() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("src/test/resources/scenarios"))) {
            List<Path> all = files.filter(p -> p.toString().endsWith(".yml")).sorted().toList();
            assertThat(all).as("scenario files").isNotEmpty();
            return all.stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void theStoryEndsAsTheScenarioSays(Path file) throws IOException {
        ScenarioRunner scenario = ScenarioRunner.load(file);

        List<String> problems = scenario.run();

        assertThat(problems).as(scenario.description()).isEmpty();
    }
}
