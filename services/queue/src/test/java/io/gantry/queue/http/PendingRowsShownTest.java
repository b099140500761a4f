package io.gantry.queue.http;

import io.gantry.runtime.http.Caller;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class PendingRowsShownTest {
    private static final String MINE = "0a69b3c2-1111-4222-8333-944455556666";
    private static final String THEIRS = "fddcacbb-35ed-497e-b5b7-1066b4c990c8";

    @Test
    void aTenantSeesAnotherTenantsJobInItsQueuesSentencesAsAnotherTenantsAndAnAdminSeesIt() {
        String sentence = "quota reserved for starving job " + THEIRS + " (behind " + MINE + ")";
        List<QueueController.PendingJobRow> rows = List.of(new QueueController.PendingJobRow(MINE, "vision", 1,
                BigDecimal.ONE, "2026-11-30T00:00:00Z", false, "QUOTA", sentence, "HELD_FOR_STARVING_JOB", 0,
                BigDecimal.ZERO));
        Map<String, String> tenants = Map.of(MINE, "vision", THEIRS, "audio");

        assertThat(QueueController.shownTo(new Caller("vision", false), rows, tenants::get).get(0).message())
                .isEqualTo("quota reserved for starving job (another tenant's) (behind " + MINE + ")");
        assertThat(QueueController.shownTo(new Caller("ops", true), rows, tenants::get).get(0).message())
                .isEqualTo(sentence);
        assertThat(QueueController.shownTo(new Caller("vision", false), rows, id -> "").get(0).message())
                .as("an id the core does not know as a job (a node, an allocation) stays").isEqualTo(sentence);
    }
}
