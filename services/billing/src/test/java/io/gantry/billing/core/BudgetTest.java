package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.YearMonth;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BudgetTest {
    static final BillingMonth MONTH = new BillingMonth(YearMonth.of(2026, 11), ZoneId.of("UTC"));
    static final Budget BUDGET = new Budget("vision", null, new BigDecimal("100"), Budget.Action.REJECT,
            List.of(50, 80));

    @ParameterizedTest(name = "spent {0} of 100 is {1} at {2}%")
    @CsvSource({"0, OK, 0", "49.99, OK, 0", "50, WARNING, 50", "80.00, WARNING, 80", "99.99, WARNING, 80",
            "100, EXHAUSTED, 100", "250, EXHAUSTED, 100"})
    void theSpendDecidesTheState(String spent, Budget.State state, int threshold) {
        Budget.Status s = BUDGET.evaluate(MONTH, new BigDecimal(spent));
        assertThat(s.state()).isEqualTo(state);
        assertThat(s.thresholdPercent()).isEqualTo(threshold);
    }

    @Test
    void aValidDocumentIsReadWithDefaults() {
        List<Budget> budgets = BudgetParser.parse(Map.of("budgets", List.of(
                Map.of("tenant", "vision", "limit", "500.00"),
                Map.of("tenant", "vision", "queue", "batch", "limit", 100, "action", "hold", "warnAt", List.of(90)))),
                b -> BigDecimal.ZERO, 2);
        assertThat(budgets).extracting(Budget::key, Budget::action, Budget::warnAt).containsExactly(
                org.assertj.core.groups.Tuple.tuple("vision", Budget.Action.WARN, List.of(50, 80)),
                org.assertj.core.groups.Tuple.tuple("vision/batch", Budget.Action.HOLD, List.of(90)));
    }

    static Stream<Arguments> bad() {
        return Stream.of(
                Arguments.of("a limit below this month's spend", Map.of("tenant", "vision", "limit", "10"),
                        "budgets[0].limit"),
                Arguments.of("a negative limit", Map.of("tenant", "vision", "limit", "-1"), "budgets[0].limit"),
                Arguments.of("a limit finer than the currency's cents", Map.of("tenant", "vision", "limit", "20.001"),
                        "budgets[0].limit"),
                Arguments.of("an unknown action", Map.of("tenant", "vision", "limit", "20", "action", "KILL"),
                        "budgets[0].action"),
                Arguments.of("thresholds not ascending", Map.of("tenant", "vision", "limit", "20",
                        "warnAt", List.of(80, 50)), "budgets[0].warnAt"),
                Arguments.of("no tenant", Map.of("limit", "20"), "budgets[0].tenant"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("bad")
    void badBudgetsAreRefusedNamingTheField(String name, Map<String, Object> budget, String field) {
        assertThatThrownBy(() -> BudgetParser.parse(Map.of("budgets", List.of(budget)),
                b -> new BigDecimal("12.50"), 2))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .extracting(InvalidInput.Field::field).contains(field));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "an unchanged budget that running work took past its limit is accepted | 100 | 100 | 130 | true",
            "a raised limit still below the spend is accepted                      | 100 | 120 | 130 | true",
            "a lowered limit below the spend is refused                            | 100 |  90 | 130 | false",
            "a lowered limit still above the spend is accepted                     | 140 | 100 |  95 | true"})
    void onlyANewBudgetOrALoweredLimitIsCheckedAgainstTheSpend(String name, String inForceLimit, String limit,
                                                               String visionSpent, boolean accepted) {
        List<Budget> inForce = List.of(new Budget("vision", null, new BigDecimal(inForceLimit), Budget.Action.HOLD,
                List.of(50, 80)));
        Map<String, Object> tree = Map.of("budgets", List.of(
                Map.of("tenant", "vision", "limit", limit, "action", "HOLD"),
                Map.of("tenant", "nlp", "limit", "50")));
        java.util.function.Function<Budget, BigDecimal> spent = b -> b.tenant().equals("vision")
                ? new BigDecimal(visionSpent) : BigDecimal.ZERO;
        if (accepted) {
            assertThat(BudgetParser.parse(tree, inForce, spent, 2)).extracting(Budget::key)
                    .containsExactly("vision", "nlp");
        } else {
            assertThatThrownBy(() -> BudgetParser.parse(tree, inForce, spent, 2))
                    .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                            .extracting(InvalidInput.Field::field).containsExactly("budgets[0].limit"));
        }
    }

    @Test
    void aNewBudgetBelowTheSpendIsRefusedEvenBesideAnExistingOneOfTheSameTenant() {
        List<Budget> inForce = List.of(new Budget("vision", null, new BigDecimal("100"), Budget.Action.HOLD,
                List.of(50, 80)));
        assertThatThrownBy(() -> BudgetParser.parse(Map.of("budgets", List.of(
                        Map.of("tenant", "vision", "limit", "100", "action", "HOLD"),
                        Map.of("tenant", "vision", "queue", "batch", "limit", "10"))), inForce,
                b -> new BigDecimal("130"), 2))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .extracting(InvalidInput.Field::field).containsExactly("budgets[1].limit"));
    }

    @Test
    void twoBudgetsForTheSameTenantAndQueueAreRefused() {
        assertThatThrownBy(() -> BudgetParser.parse(Map.of("budgets", List.of(
                Map.of("tenant", "vision", "limit", "20"), Map.of("tenant", "vision", "limit", "30"))),
                b -> BigDecimal.ZERO, 2))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .extracting(InvalidInput.Field::field).containsExactly("budgets[1].tenant"));
    }
}
