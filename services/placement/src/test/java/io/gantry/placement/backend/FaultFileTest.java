package io.gantry.placement.backend;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FaultFileTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    @Test
    void theFaultFileInjectsEachFaultWhenItsVirtualTimeHasCome() {
        SimulatedBackend sim = new SimulatedBackend(ClusterFile.defaultCluster()).withFaultSchedule(FaultFile.parse("""
                faults:
                  - after: 30
                    node: sim-1
                    gpu: 3
                    kind: xid
                    xid: 79
                  - after: 5
                    node: sim-2
                    kind: GPU_LOST
                    message: gone
                """));
        assertThat(sim.pollFaults(T0, 8)).isEmpty();
        assertThat(sim.pollFaults(T0.plusSeconds(5), 8)).containsExactly(
                new DeviceFault("sim-2", null, DeviceFault.Kind.GPU_LOST, null, "fault-file", "gone"));
        assertThat(sim.pollFaults(T0.plusSeconds(29), 8)).isEmpty();
        assertThat(sim.pollFaults(T0.plusSeconds(31), 8)).extracting(DeviceFault::message)
                .containsExactly("Xid 79 on GPU 3 of sim-1");
    }

    @Test
    void everyErrorNamesTheEntryAndTheField() {
        assertThatThrownBy(() -> FaultFile.parse("faults:\n  - node: sim-1\n    kind: WOBBLE\n"))
                .hasMessage("faults[0].kind: unknown kind WOBBLE");
        assertThatThrownBy(() -> FaultFile.parse("faults:\n  - node: sim-1\n    kind: XID\n"))
                .hasMessage("faults[0]: an XID fault needs its xid code");
        assertThatThrownBy(() -> FaultFile.parse("faults:\n  - kind: THERMAL\n")).hasMessage("faults[0].node: required");
        assertThatThrownBy(() -> FaultFile.parse("faults:\n  - node: a\n    kind: THERMAL\n    after: -1\n"))
                .hasMessage("faults[0].after: must be >= 0, was -1.0");
        assertThatThrownBy(() -> new SimulatedBackend(ClusterFile.defaultCluster())
                .withFaultSchedule(FaultFile.parse("faults:\n  - node: nope\n    kind: THERMAL\n")))
                .hasMessage("fault file: no simulated node nope");
        assertThat(FaultFile.parse("")).isEqualTo(List.of());
    }

    @Test
    void preflightFailuresFollowTheSeededProbability() {
        SimulatedBackend a = new SimulatedBackend(ClusterFile.defaultCluster()).withPreflightFailures(0.5, 7);
        SimulatedBackend b = new SimulatedBackend(ClusterFile.defaultCluster()).withPreflightFailures(0.5, 7);
        var node = ClusterFile.defaultCluster().get(0);
        List<Boolean> runA = java.util.stream.IntStream.range(0, 50).mapToObj(i -> a.preflight(node, T0).isPresent()).toList();
        List<Boolean> runB = java.util.stream.IntStream.range(0, 50).mapToObj(i -> b.preflight(node, T0).isPresent()).toList();
        assertThat(runA).isEqualTo(runB).contains(true, false);
        assertThat(new SimulatedBackend(ClusterFile.defaultCluster()).preflight(node, T0)).isEmpty();
    }
}
