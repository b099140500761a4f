package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class CheckpointReportTest {
    static final JobSpec.Checkpoint DECLARED = new JobSpec.Checkpoint("/ckpt/resnet", 1800L);

    @Test
    void aReportUnderTheDeclaredDirectoryIsTakenWithItsSizeAndSaveTime() {
        CheckpointReport.Parsed p = CheckpointReport.parse(Map.of("step", 1200, "path", "/ckpt/resnet/step-1200.pt",
                "sizeBytes", 524288000L, "saveSeconds", new BigDecimal("12.5")), DECLARED);

        assertThat(p.errors()).isEmpty();
        assertThat(p.report()).isEqualTo(new CheckpointReport(1200, "/ckpt/resnet/step-1200.pt", 524288000L, 12_500L));
    }

    @Test
    void aRetriedReportIsTheSameEventAndAnotherStepOrAttemptIsNot() {
        CheckpointReport r = new CheckpointReport(10, "/ckpt/a", null, null);

        assertThat(r.eventId("j", 1)).isEqualTo(new CheckpointReport(10, "/ckpt/a", 5L, 1L).eventId("j", 1));
        assertThat(r.eventId("j", 2)).isNotEqualTo(r.eventId("j", 1));
        assertThat(new CheckpointReport(11, "/ckpt/a", null, null).eventId("j", 1)).isNotEqualTo(r.eventId("j", 1));
    }

    @Test
    void withoutADeclaredDirectoryAnyAbsolutePathIsTaken() {
        assertThat(CheckpointReport.parse(Map.of("step", 0, "path", "/data/x"), null).isValid()).isTrue();
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                arguments("no step", Map.of("path", "/ckpt/resnet/a"), "step", "is required"),
                arguments("a negative step", Map.of("step", -1, "path", "/ckpt/resnet/a"), "step", "between 0"),
                arguments("a fractional step", Map.of("step", 1.5, "path", "/ckpt/resnet/a"), "step", "integer"),
                arguments("a path outside the declared directory", Map.of("step", 1, "path", "/tmp/a"), "path",
                        "under the job's checkpoint directory /ckpt/resnet"),
                arguments("a sibling directory that merely shares a prefix", Map.of("step", 1,
                        "path", "/ckpt/resnet-old/a"), "path", "under the job's checkpoint directory"),
                arguments("a relative path", Map.of("step", 1, "path", "step-1.pt"), "path", "absolute path"),
                arguments("a path climbing out with ..", Map.of("step", 1, "path", "/ckpt/resnet/../../etc"), "path",
                        "absolute path"),
                arguments("a NUL in the path", Map.of("step", 1, "path", "/ckpt/resnet/a\u0000"), "path",
                        "absolute path"),
                arguments("a negative size", Map.of("step", 1, "path", "/ckpt/resnet/a", "sizeBytes", -5), "sizeBytes",
                        "between 0"),
                arguments("a negative save time", Map.of("step", 1, "path", "/ckpt/resnet/a", "saveSeconds", -1),
                        "saveSeconds", "between 0"),
                arguments("an unknown field", Map.of("step", 1, "path", "/ckpt/resnet/a", "loss", 0.3), "loss",
                        "unknown field"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refused")
    void refusesABadReportNamingTheField(String description, Map<String, Object> body, String field, String message) {
        CheckpointReport.Parsed p = CheckpointReport.parse(body, DECLARED);

        assertThat(p.isValid()).isFalse();
        assertThat(p.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    @Test
    void aBodyThatIsNotAnObjectIsRefused() {
        assertThat(CheckpointReport.parse(List.of(1), DECLARED).errors()).extracting(FieldError::field)
                .containsExactly("body");
    }
}
