package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.List;

import static io.gantry.billing.core.BudgetTest.BUDGET;
import static io.gantry.billing.core.BudgetTest.MONTH;
import static org.assertj.core.api.Assertions.assertThat;

class BudgetAnnouncementsTest {
    private static Budget.Status spent(Budget b, String amount) {
        return b.evaluate(MONTH, new BigDecimal(amount));
    }

    @Test
    void eachBudgetOnceThenOnlyWhatChangedWithAnAlertForANewThreshold() {
        BudgetAnnouncements a = new BudgetAnnouncements();
        assertThat(a.next(List.of(spent(BUDGET, "10")))).singleElement()
                .satisfies(c -> assertThat(c.alert()).isFalse());
        assertThat(a.next(List.of(spent(BUDGET, "20")))).as("the spend alone moved").isEmpty();
        assertThat(a.next(List.of(spent(BUDGET, "60")))).singleElement().satisfies(c -> {
            assertThat(c.status().thresholdPercent()).isEqualTo(50);
            assertThat(c.alert()).isTrue();
        });
        Budget raised = new Budget("vision", null, new BigDecimal("1000"), Budget.Action.REJECT, List.of(50, 80));
        assertThat(a.next(List.of(spent(raised, "60")))).as("back to OK under a new limit: announced, no alert")
                .singleElement().satisfies(c -> assertThat(c.alert()).isFalse());
    }

    @Test
    void aRemovedBudgetIsAnnouncedOnceAsOkAndWarnOnly() {
        BudgetAnnouncements a = new BudgetAnnouncements();
        a.next(List.of(spent(BUDGET, "100")));
        assertThat(a.next(List.of())).singleElement().satisfies(c -> {
            assertThat(c.status().state()).isEqualTo(Budget.State.OK);
            assertThat(c.status().budget().action()).isEqualTo(Budget.Action.WARN);
            assertThat(c.alert()).isFalse();
        });
        assertThat(a.next(List.of())).isEmpty();
    }

    @Test
    void forgettingAnnouncesEveryBudgetAgain() {
        BudgetAnnouncements a = new BudgetAnnouncements();
        a.next(List.of(spent(BUDGET, "10")));
        a.forget();
        assertThat(a.next(List.of(spent(BUDGET, "10")))).hasSize(1);
    }
}
