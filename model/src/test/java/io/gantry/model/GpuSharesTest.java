package io.gantry.model;

import io.gantry.testkit.PureCore;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.math.BigDecimal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuSharesTest {
    @ParameterizedTest(name = "{0} GPUs, fraction {1}, MIG {2}: {3} thousandths")
    @CsvSource(nullValues = "-", value = {
            "0, -,   -,       0",
            "1, -,   -,       1000",
            "8, -,   -,       8000",
            "0, 500, -,       500",
            "0, 1,   -,       1",
            "0, 999, -,       999",
            "0, -,   1g.10gb, 142",
            "0, -,   2g.20gb, 285",
            "0, -,   3g.40gb, 428",
            "0, -,   4g.40gb, 571",
            "0, -,   7g.80gb, 1000",
    })
    void whatATaskHolds(int gpus, Integer fraction, String mig, long expected) {
        assertThat(GpuShares.perTask(gpus, fraction, mig)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} GPUs, fraction {1}, MIG {2}: refused")
    @CsvSource(nullValues = "-", value = {
            "-1, -,    -",
            "0,  0,    -",
            "0,  1000, -",
            "1,  500,  -",
            "1,  -,    1g.10gb",
            "0,  500,  1g.10gb",
            "0,  -,    8g.80gb",
            "0,  -,    half",
    })
    void aShapeThatIsNotOneOfTheThreeIsRefused(int gpus, Integer fraction, String mig) {
        assertThatThrownBy(() -> GpuShares.perTask(gpus, fraction, mig)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aMigInstanceIsItsComputeSlicesOverSevenRoundedDown() {
        for (int s = 1; s <= 6; s++) {
            assertThat(GpuShares.migMilli(s)).isEqualTo(s * 1000 / 7).isLessThan(1000);
        }
        assertThat(GpuShares.migMilli(7)).isEqualTo(1000);
        assertThatThrownBy(() -> GpuShares.migMilli(0)).hasMessageContaining("1-7");
    }

    @ParameterizedTest(name = "{0} GPUs = {1} thousandths")
    @CsvSource({"0, 0", "1, 1000", "12.5, 12500", "0.125, 125", "2.50, 2500", "1e3, 1000000"})
    void gpusWrittenByPeopleBecomeThousandths(String gpus, long milli) {
        assertThat(GpuShares.fromGpus(new BigDecimal(gpus))).isEqualTo(milli);
    }

    @Test
    void moreThanAThousandthIsRefusedNotRounded() {
        assertThatThrownBy(() -> GpuShares.fromGpus(new BigDecimal("0.0005")))
                .hasMessageContaining("three decimal places");
    }

    @ParameterizedTest(name = "{0} thousandths read {1}")
    @CsvSource({"0, 0", "1000, 1", "2500, 2.5", "125, 0.125", "12000, 12", "1001, 1.001"})
    void thousandthsReadAsGpus(long milli, String text) {
        assertThat(GpuShares.format(milli)).isEqualTo(text);
        assertThat(GpuShares.toGpus(milli).toPlainString()).isEqualTo(text);
    }

    @Property
    void formattingAndParsingAgree(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long milli) {
        assertThat(GpuShares.fromGpus(new BigDecimal(GpuShares.format(milli)))).isEqualTo(milli);
    }

    @Property
    void wholeDevicesPlusSharesAreHeldExactly(@ForAll @IntRange(min = 0, max = 64) int whole,
                                              @ForAll @IntRange(min = 0, max = 7) int fractions) {
        assertThat(GpuShares.held(whole, fractions * 125L)).isEqualTo(whole * 1000L + fractions * 125L);
    }

    @Test
    void theModelIsPlainJava() {
        assertThat(PureCore.violations("io.gantry.model")).isEmpty();
    }
}
