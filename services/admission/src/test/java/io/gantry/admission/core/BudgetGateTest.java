package io.gantry.admission.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class BudgetGateTest {
    static final Instant FROM = Instant.parse("2026-11-01T00:00:00Z");
    static final Instant TO = Instant.parse("2026-12-01T00:00:00Z");
    static final Instant NOW = Instant.parse("2026-11-24T12:00:00Z");

    static BudgetGate.Status status(String queue, String state, String action) {
        return new BudgetGate.Status("vision", queue, FROM, TO, state, action, "100.00", "120.00", "EUR", 80);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "an exhausted tenant budget set to reject refuses the job    | EXHAUSTED | REJECT | REJECT",
            "an exhausted tenant budget set to hold holds the job        | EXHAUSTED | HOLD   | HOLD",
            "an exhausted tenant budget set to warn only warns           | EXHAUSTED | WARN   | WARN",
            "a budget past a warning threshold warns whatever its action | WARNING   | REJECT | WARN",
            "a budget below its thresholds lets the job through          | OK        | REJECT | ALLOW"})
    void theBudgetStateAndActionDecide(String name, String state, String action, BudgetGate.Verdict verdict) {
        BudgetGate gate = BudgetGate.none().with(status(null, state, action));
        assertThat(gate.decide("vision", "vision", NOW).verdict()).isEqualTo(verdict);
    }

    @Test
    void theNewestAnnouncementOfABudgetAndMonthStands() {
        BudgetGate gate = BudgetGate.none().with(status(null, "EXHAUSTED", "REJECT")).with(status(null, "OK", "REJECT"));
        assertThat(gate.decide("vision", "vision", NOW).verdict()).isEqualTo(BudgetGate.Verdict.ALLOW);
    }

    @Test
    void aQueueBudgetGatesOnlyJobsOfThatQueueAndNamesTheQueue() {
        BudgetGate gate = BudgetGate.none().with(status("batch", "EXHAUSTED", "REJECT"));
        BudgetGate.Decision d = gate.decide("vision", "batch", NOW);
        assertThat(d.verdict()).isEqualTo(BudgetGate.Verdict.REJECT);
        assertThat(d.field()).isEqualTo("queue");
        assertThat(d.message()).contains("queue batch of tenant vision").contains("spent 120.00 of 100.00 EUR");
        assertThat(gate.decide("vision", "interactive", NOW).verdict()).isEqualTo(BudgetGate.Verdict.ALLOW);
    }

    @Test
    void theStrictestOfTheTenantAndQueueBudgetsWins() {
        BudgetGate gate = BudgetGate.none().with(status(null, "EXHAUSTED", "HOLD"))
                .with(status("batch", "EXHAUSTED", "REJECT"));
        assertThat(gate.decide("vision", "batch", NOW).verdict()).isEqualTo(BudgetGate.Verdict.REJECT);
        assertThat(gate.decide("vision", "other", NOW).verdict()).isEqualTo(BudgetGate.Verdict.HOLD);
        assertThat(gate.decide("vision", "other", NOW).retryAt()).isEqualTo(TO);
    }

    @Test
    void lastMonthsExhaustedBudgetDoesNotGateThisMonthOrOtherTenants() {
        BudgetGate gate = BudgetGate.none().with(status(null, "EXHAUSTED", "REJECT"));
        assertThat(gate.decide("vision", "vision", TO).verdict()).isEqualTo(BudgetGate.Verdict.ALLOW);
        assertThat(gate.decide("nlp", "nlp", NOW).verdict()).isEqualTo(BudgetGate.Verdict.ALLOW);
    }
}
