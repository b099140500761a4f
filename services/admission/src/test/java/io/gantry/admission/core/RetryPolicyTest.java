package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.gantry.admission.core.SpecTrees.aJob;
import static io.gantry.admission.core.SpecTrees.cluster;
import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** A job's retry policy for its own failures: validated naming the field, carried into the spec and shown back. */
class RetryPolicyTest {
    private static final ClusterLimits CLUSTER = cluster(List.of(gpus(8, "H100")));
    private final JobSpecValidator validator = new JobSpecValidator();

    static Stream<Arguments> refused() {
        return Stream.of(
                arguments("a policy given as a number", aJob().set("retry", 3).build(), "retry", "must be an object"),
                arguments("no maxRetries", aJob().set("retry", Map.of("backoffSeconds", 5)).build(),
                        "retry.maxRetries", "is required"),
                arguments("too many retries", aJob().set("retry", Map.of("maxRetries", 11)).build(),
                        "retry.maxRetries", "between 0 and 10"),
                arguments("a negative backoff", aJob().set("retry", Map.of("maxRetries", 1, "backoffSeconds", -1))
                        .build(), "retry.backoffSeconds", "between 0 and 3600"),
                arguments("a backoff over an hour", aJob().set("retry", Map.of("maxRetries", 1,
                        "backoffSeconds", 3601)).build(), "retry.backoffSeconds", "between 0 and 3600"),
                arguments("an unknown field", aJob().set("retry", Map.of("maxRetries", 1, "limit", 2)).build(),
                        "retry.limit", "unknown field"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refused")
    void refusesABadPolicyNamingTheField(String description, Object tree, String field, String message) {
        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.isValid()).isFalse();
        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    @Test
    void aPolicyIsCarriedIntoTheSpecWithADefaultBackoffAndShownBack() {
        Validated v = validator.validate(aJob().set("retry", Map.of("maxRetries", 3)).build(), CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().retry()).isEqualTo(new JobSpec.Retry(3, 10));
        assertThat(JobSpecTree.toTree(v.spec()).get("retry"))
                .isEqualTo(Map.of("maxRetries", 3, "backoffSeconds", 10));
    }

    @Test
    void withoutAPolicyTheSpecHasNone() {
        assertThat(validator.validate(aJob().build(), CLUSTER).spec().retry()).isNull();
    }
}
