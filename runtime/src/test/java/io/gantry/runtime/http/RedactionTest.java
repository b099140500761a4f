package io.gantry.runtime.http;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class RedactionTest {
    private static final String MINE = "0a69b3c2-1111-4222-8333-944455556666";
    private static final String THEIRS = "fddcacbb-35ed-497e-b5b7-1066b4c990c8";

    @Test
    void anotherTenantsJobIdsAreReplacedInEveryStringAndOwnOnesKept() {
        Map<String, Object> view = Map.of("jobId", MINE, "history", List.of(Map.of("reason",
                "PREEMPTED: queue evil reclaims 8 x H100 (for job " + THEIRS + ")"), Map.of("attempt", 2)),
                "waitMessage", "after " + MINE + " and " + THEIRS);
        assertThat(Redaction.jobIds(view)).containsExactlyInAnyOrder(MINE, THEIRS);

        @SuppressWarnings("unchecked")
        Map<String, Object> shown = (Map<String, Object>) Redaction.redact(view, Set.of(THEIRS)::contains);
        assertThat(shown).containsEntry("jobId", MINE)
                .containsEntry("waitMessage", "after " + MINE + " and (another tenant's)");
        assertThat(shown.get("history").toString()).contains("(for job (another tenant's))").doesNotContain(THEIRS)
                .contains("attempt=2");
        assertThat(Redaction.text(null, id -> true)).isNull();
        assertThat(Redaction.text("no id here: abc-123", id -> true)).isEqualTo("no id here: abc-123");
    }
}
