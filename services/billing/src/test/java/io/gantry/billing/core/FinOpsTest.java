package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gantry.billing.core.PricingTest.HOUR;
import static io.gantry.billing.core.PricingTest.T0;
import static io.gantry.billing.core.PricingTest.book;
import static io.gantry.billing.core.PricingTest.entry;
import static org.assertj.core.api.Assertions.assertThat;

class FinOpsTest {
    @Test
    void failedAndRetriedWorkMakesEachSuccessDearerAndTheShareIsOfTheRegisteredCapacity() {
        List<LedgerEntry> entries = List.of(
                entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, "RUN_FAILED"),
                entry("b/n1", "job-1", "H100", 1000, HOUR, 2 * HOUR, 0, 0, "RUN_SUCCEEDED"),
                entry("c/n1", "job-2", "H100", 2000, 0, HOUR, 0, 0, "RUN_FAILED"));
        UsageWindow day = new UsageWindow(T0, T0.plusMillis(4 * HOUR));
        List<RatedLine> lines = Pricing.rate(entries, day, book(), Map.of(), Checkpoints.none(),
                CreditPolicy.of(false));

        List<FinOps.TenantView> views = FinOps.summarize(entries, lines, day, 8000, 2);

        assertThat(views).singleElement().satisfies(v -> {
            assertThat(v.jobs()).isEqualTo(2);
            assertThat(v.successfulJobs()).isEqualTo(1);
            assertThat(v.cost()).isEqualByComparingTo("10.00");
            assertThat(v.costOfUnsuccessfulJobs()).isEqualByComparingTo("5.00");
            assertThat(v.costPerSuccessfulJob()).isEqualByComparingTo("10.00");
            // 4 GPU-hours held of 8 GPUs x 4 hours
            assertThat(v.allocationShare()).isEqualByComparingTo("0.125");
        });
    }

    @Test
    void withoutSuccessesOrCapacityThoseFiguresAreAbsent() {
        List<LedgerEntry> entries = List.of(entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, "NODE_FAILED"));
        List<FinOps.TenantView> views = FinOps.summarize(entries, List.of(), UsageWindow.all(), 0, 2);
        assertThat(views).singleElement().satisfies(v -> {
            assertThat(v.costPerSuccessfulJob()).isNull();
            assertThat(v.allocationShare()).isNull();
        });
    }
}
