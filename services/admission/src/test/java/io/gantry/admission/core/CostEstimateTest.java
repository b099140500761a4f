package io.gantry.admission.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class CostEstimateTest {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Instant NOW = Instant.parse("2026-11-24T00:00:00Z");
    static final CostEstimate.PriceList PRICES = new CostEstimate.PriceList(3, "EUR", List.of(
            new CostEstimate.GpuPrice("H100", null, new BigDecimal("2.50"), T0),
            new CostEstimate.GpuPrice("H100", null, new BigDecimal("9.99"), NOW.plusSeconds(86_400)),
            new CostEstimate.GpuPrice("A100", null, new BigDecimal("1.20"), T0),
            new CostEstimate.GpuPrice("A100", "premium", new BigDecimal("4.00"), T0)),
            List.of(new CostEstimate.Timed(new BigDecimal("0.04"), T0)), List.of(),
            List.of(new CostEstimate.Multiplier(null, "preemptible", new BigDecimal("0.5"), T0)));

    static TaskSpec task(int replicas, int gpus, String model, List<String> models, String tier, Integer milli) {
        return new TaskSpec("w", replicas, List.of("x"), gpus, model, 0, 1024, null, models, tier, milli, null, null);
    }

    static JobSpec job(Long limit, String priorityClass, TaskSpec... tasks) {
        return new JobSpec("j", 0, limit, List.of(tasks), null, priorityClass, null, null, null);
    }

    static Stream<Arguments> estimates() {
        return Stream.of(
                Arguments.of("two replicas of 4 H100 for an hour", job(3600L, null, task(2, 4, "H100", null, null,
                        null)), "20.00"),
                Arguments.of("a price from tomorrow is not used today", job(7200L, null, task(1, 1, "H100", null, null,
                        null)), "5.00"),
                Arguments.of("any model: the most expensive one is assumed", job(3600L, null, task(1, 1, null, null,
                        null, null)), "2.50"),
                Arguments.of("a model list: the most expensive of the list", job(3600L, null, task(1, 1, null,
                        List.of("A100"), null, null)), "1.20"),
                Arguments.of("a tier's own price", job(3600L, null, task(1, 1, "A100", null, "premium", null)), "4.00"),
                Arguments.of("half a GPU at the preemptible discount, 0.625 rounded up (a bound)", job(3600L,
                        "preemptible", task(1, 0, "H100", null, null, 500)), "0.63"),
                Arguments.of("two MIG instances at their profile's price for two hours, and their CPU", job(7200L,
                        null, mig(2, "A100", "1g.10gb", 1000)), "0.96"),
                Arguments.of("a MIG instance without a profile price: its share (3/7) of the model's price", job(3600L,
                        null, mig(1, "A100", "3g.40gb", 0)), "0.52"));
    }

    static final CostEstimate.PriceList PRICES_WITH_MIG = new CostEstimate.PriceList(3, "EUR", PRICES.gpu(),
            PRICES.cpu(), PRICES.memory(), PRICES.multipliers(),
            List.of(new CostEstimate.MigPrice("A100", "1g.10gb", new BigDecimal("0.20"), T0)));

    static TaskSpec mig(int replicas, String model, String profile, int cpuMillis) {
        return new TaskSpec("w", replicas, List.of("x"), 0, model, cpuMillis, 1024, null, null, null, null, null,
                profile);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("estimates")
    void aJobWithATimeLimitGetsAnUpperBound(String name, JobSpec spec, String amount) {
        assertThat(CostEstimate.of(spec, "vision", PRICES_WITH_MIG, NOW)).hasValueSatisfying(e -> {
            assertThat(e.amount()).isEqualByComparingTo(amount);
            assertThat(e.currency()).isEqualTo("EUR");
        });
    }

    @Test
    void noTimeLimitOrNoPriceBookMeansNoEstimate() {
        assertThat(CostEstimate.of(job(null, null, task(1, 1, "H100", null, null, null)), "vision", PRICES, NOW))
                .isEmpty();
        assertThat(CostEstimate.of(job(60L, null, task(1, 1, "H100", null, null, null)), "vision", null, NOW))
                .isEmpty();
    }
}
