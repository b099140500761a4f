package io.gantry.placement.backend.health;

import io.gantry.placement.backend.DeviceFault;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Recorded nvidia-smi samples and kernel log lines, as a faulty host writes them. */
class GpuHealthTest {

    static String sample(String name) {
        try (InputStream in = GpuHealthTest.class.getResourceAsStream("/health/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aQuerySampleIsReadPerGpuWithTheGpusWithoutEccAndTheLostOnes() {
        assertThat(GpuHealth.parseQuery(sample("query-healthy.csv"))).containsExactly(
                new GpuHealth.GpuState(0, "3b:00", 0L, false, false), new GpuHealth.GpuState(1, "5e:00", 0L, false, false),
                new GpuHealth.GpuState(2, "86:00", 0L, false, false), new GpuHealth.GpuState(3, "af:00", null, false, false));
        assertThat(GpuHealth.parseQuery(sample("query-faulty.csv")).get(0).lost()).isTrue();
    }

    @Test
    void xidLinesAreReadWithTheirBusIdAndCodeAndOtherLinesAreIgnored() {
        assertThat(GpuHealth.parseKernelLog(sample("kern.log"))).extracting(GpuHealth.XidLine::busId,
                GpuHealth.XidLine::xid).containsExactly(org.assertj.core.groups.Tuple.tuple("3b:00", 79),
                org.assertj.core.groups.Tuple.tuple("86:00", 13), org.assertj.core.groups.Tuple.tuple("af:00", 48));
    }

    @Test
    void theMonitorReportsEachConditionWhenItAppearsAndNotAgainWhileItLasts() {
        GpuHealth.Monitor m = new GpuHealth.Monitor("gpu-host", Set.of(0, 1, 2, 3));
        assertThat(m.onQuery(sample("query-healthy.csv"))).isEmpty();
        List<DeviceFault> faults = m.onQuery(sample("query-faulty.csv"));
        assertThat(faults).extracting(DeviceFault::gpuIndex, DeviceFault::kind).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0, DeviceFault.Kind.GPU_LOST),
                org.assertj.core.groups.Tuple.tuple(1, DeviceFault.Kind.ECC_DOUBLE_BIT),
                org.assertj.core.groups.Tuple.tuple(2, DeviceFault.Kind.THERMAL),
                org.assertj.core.groups.Tuple.tuple(3, DeviceFault.Kind.GPU_LOST));
        assertThat(faults.get(1).message()).isEqualTo("nvidia-smi: 2 uncorrectable ECC error(s) on GPU 1");
        assertThat(m.onQuery(sample("query-faulty.csv"))).isEmpty();
        // back to normal (the driver reloaded: counters at 0), then the same faults again: reported again
        m.onQuery(sample("query-healthy.csv"));
        assertThat(m.onQuery(sample("query-faulty.csv"))).extracting(DeviceFault::kind)
                .containsExactly(DeviceFault.Kind.GPU_LOST, DeviceFault.Kind.ECC_DOUBLE_BIT, DeviceFault.Kind.THERMAL,
                        DeviceFault.Kind.GPU_LOST);
    }

    @Test
    void anXidIsMappedToItsGpuThroughTheBusIdsTheQueryShowed() {
        GpuHealth.Monitor m = new GpuHealth.Monitor("gpu-host", Set.of(0, 1, 2, 3));
        m.onQuery(sample("query-healthy.csv"));
        List<DeviceFault> faults = m.onKernelLog(sample("kern.log"));
        assertThat(faults).extracting(DeviceFault::gpuIndex, DeviceFault::xid).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0, 79), org.assertj.core.groups.Tuple.tuple(2, 13),
                org.assertj.core.groups.Tuple.tuple(3, 48));
        assertThat(faults.get(0).message()).isEqualTo("Xid 79 on GPU 0 of gpu-host: pid=0, GPU has fallen off the bus.");
        assertThat(faults.get(0).source()).isEqualTo("kernel-log");
    }

    @Test
    void anXidOfABusNoQueryShowedIsReportedForTheWholeNode() {
        GpuHealth.Monitor m = new GpuHealth.Monitor("gpu-host", Set.of());
        assertThat(m.onKernelLog(sample("kern.log")).get(0).gpuIndex()).isNull();
    }
}
