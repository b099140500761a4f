package io.gantry.recovery.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static io.gantry.recovery.core.RecoveryScenario.aRecovery;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class DeviceHealthTest {

    private static Arguments scenario(String name, UnaryOperator<RecoveryScenario> steps, String... expected) {
        return arguments(named(name, steps), List.of(expected));
    }

    static Stream<Arguments> faults() {
        return Stream.of(
                scenario("an application Xid fails the run that held the device and leaves the device in service",
                        s -> s.granted("job-1", 1, "sim-1:2,3").xid("f1", "sim-1", 2, 13, 5),
                        "FAIL_RUNS sim-1#2: Xid 13 (graphics engine exception) on GPU 2 of sim-1: application fault, "
                                + "the device stays in service; fails job job-1 attempt 1"),
                scenario("Xid 31 and 43 are application faults too",
                        s -> s.xid("f1", "sim-1", 0, 31, 5).xid("f2", "sim-1", 0, 43, 6),
                        "FAIL_RUNS sim-1#0: Xid 31 (GPU memory page fault) on GPU 0 of sim-1: application fault, the "
                                + "device stays in service; no run held it",
                        "FAIL_RUNS sim-1#0: Xid 43 (GPU stopped processing) on GPU 0 of sim-1: application fault, the "
                                + "device stays in service; no run held it"),
                scenario("a hardware Xid cordons the GPU and stops only the runs holding it",
                        s -> s.granted("job-1", 1, "sim-1:3").granted("job-2", 1, "sim-1:4")
                                .xid("f1", "sim-1", 3, 79, 5),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned; stops job job-1 attempt 1"),
                scenario("every hardware class cordons: ECC 48, row remap 63/64, NVLink 74, contained/uncontained 94/95",
                        s -> s.xid("a", "n", 0, 48, 1).xid("b", "n", 1, 63, 1).xid("c", "m", 2, 64, 1)
                                .xid("d", "m", 3, 74, 1).xid("e", "o", 4, 94, 1).xid("f", "o", 5, 95, 1),
                        "CORDON_DEVICE n#0: Xid 48 (double-bit ECC error) on GPU 0 of n: hardware fault; GPU 0 cordoned",
                        "CORDON_DEVICE n#1: Xid 63 (ECC page retirement or row remapping) on GPU 1 of n: hardware "
                                + "fault; GPU 1 cordoned",
                        "CORDON_DEVICE m#2: Xid 64 (ECC page retirement or row remapping failure) on GPU 2 of m: "
                                + "hardware fault; GPU 2 cordoned",
                        "CORDON_DEVICE m#3: Xid 74 (NVLink error) on GPU 3 of m: hardware fault; GPU 3 cordoned",
                        "CORDON_DEVICE o#4: Xid 94 (contained ECC error) on GPU 4 of o: hardware fault; GPU 4 cordoned",
                        "CORDON_DEVICE o#5: Xid 95 (uncontained ECC error) on GPU 5 of o: hardware fault; GPU 5 "
                                + "cordoned"),
                scenario("an unknown Xid is treated as a hardware fault",
                        s -> s.xid("f1", "sim-1", 1, 999, 5),
                        "CORDON_DEVICE sim-1#1: Xid 999 (unknown Xid, treated as a hardware fault) on GPU 1 of sim-1: "
                                + "hardware fault; GPU 1 cordoned"),
                scenario("double-bit ECC, link down, GPU lost and thermal are hardware faults",
                        s -> s.fault("a", "n", 0, FaultKind.ECC_DOUBLE_BIT, null, 1)
                                .fault("b", "m", 1, FaultKind.NVLINK_DOWN, null, 1)
                                .fault("c", "o", 2, FaultKind.PCIE_LINK_DOWN, null, 1)
                                .fault("d", "p", 3, FaultKind.GPU_LOST, null, 1)
                                .fault("e", "q", 4, FaultKind.THERMAL, null, 1),
                        "CORDON_DEVICE n#0: ECC_DOUBLE_BIT on GPU 0 of n: hardware fault; GPU 0 cordoned",
                        "CORDON_DEVICE m#1: NVLINK_DOWN on GPU 1 of m: hardware fault; GPU 1 cordoned",
                        "CORDON_DEVICE o#2: PCIE_LINK_DOWN on GPU 2 of o: hardware fault; GPU 2 cordoned",
                        "CORDON_DEVICE p#3: GPU_LOST on GPU 3 of p: hardware fault; GPU 3 cordoned",
                        "CORDON_DEVICE q#4: THERMAL on GPU 4 of q: hardware fault; GPU 4 cordoned"),
                scenario("a fault of the whole node cordons the node and stops every run on it",
                        s -> s.granted("job-1", 1, "sim-1:0").granted("job-2", 1, "sim-1:").granted("job-3", 1, "sim-2:0")
                                .fault("f1", "sim-1", null, FaultKind.UNKNOWN, null, 5),
                        "CORDON_NODE sim-1: UNKNOWN on node sim-1: hardware fault; node cordoned; stops job job-1 "
                                + "attempt 1, job job-2 attempt 1"),
                scenario("a repeated fault of a cordoned device, and the same report redelivered, decide nothing",
                        s -> s.xid("f1", "sim-1", 3, 79, 5).xid("f1", "sim-1", 3, 79, 5).xid("f2", "sim-1", 3, 79, 6)
                                .xid("f3", "sim-1", 3, 48, 7),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned"),
                scenario("a failed pre-flight check is placement's to handle: recovery decides nothing",
                        s -> s.fault("f1", "sim-1", null, FaultKind.PREFLIGHT_FAILED, null, 5)),
                scenario("three hardware faults of a node within the window drain it for repair",
                        s -> s.xid("f1", "sim-1", 0, 79, 0).xid("f2", "sim-1", 1, 48, 100).granted("job-1", 1, "sim-1:2")
                                .xid("f3", "sim-1", 2, 74, 200).xid("f4", "sim-1", 3, 74, 300),
                        "CORDON_DEVICE sim-1#0: Xid 79 (GPU has fallen off the bus) on GPU 0 of sim-1: hardware "
                                + "fault; GPU 0 cordoned",
                        "CORDON_DEVICE sim-1#1: Xid 48 (double-bit ECC error) on GPU 1 of sim-1: hardware fault; "
                                + "GPU 1 cordoned",
                        "DRAIN_NODE sim-1#2: Xid 74 (NVLink error) on GPU 2 of sim-1: hardware fault; node drained "
                                + "for repair (3 hardware faults within 3600 s); stops job job-1 attempt 1",
                        "CORDON_DEVICE sim-1#3: Xid 74 (NVLink error) on GPU 3 of sim-1: hardware fault; GPU 3 "
                                + "cordoned"),
                scenario("faults older than the window do not count towards a drain",
                        s -> s.xid("f1", "sim-1", 0, 79, 0).xid("f2", "sim-1", 1, 79, 3000)
                                .xid("f3", "sim-1", 2, 79, 3700),
                        "CORDON_DEVICE sim-1#0: Xid 79 (GPU has fallen off the bus) on GPU 0 of sim-1: hardware "
                                + "fault; GPU 0 cordoned",
                        "CORDON_DEVICE sim-1#1: Xid 79 (GPU has fallen off the bus) on GPU 1 of sim-1: hardware "
                                + "fault; GPU 1 cordoned",
                        "CORDON_DEVICE sim-1#2: Xid 79 (GPU has fallen off the bus) on GPU 2 of sim-1: hardware "
                                + "fault; GPU 2 cordoned"),
                scenario("a device an operator returned to service is acted upon again at its next fault",
                        s -> s.xid("f1", "sim-1", 3, 79, 5).registered("sim-1", 6, false, 3)
                                .registered("sim-1", 50, false).xid("f2", "sim-1", 3, 79, 60),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned",
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned"),
                scenario("a registration older than the fault does not return the device to service",
                        s -> s.xid("f1", "sim-1", 3, 79, 5).registered("sim-1", 4, false).xid("f2", "sim-1", 3, 79, 6),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned"),
                scenario("a released run is no longer hit by a fault of its former device",
                        s -> s.granted("job-1", 1, "sim-1:3").released("job-1", 1).xid("f1", "sim-1", 3, 13, 5),
                        "FAIL_RUNS sim-1#3: Xid 13 (graphics engine exception) on GPU 3 of sim-1: application fault, "
                                + "the device stays in service; no run held it"),
                scenario("a grant read again after its release does not bring the run back",
                        s -> s.granted("job-1", 1, "sim-1:3").released("job-1", 1).granted("job-1", 1, "sim-1:3")
                                .xid("f1", "sim-1", 3, 13, 5),
                        "FAIL_RUNS sim-1#3: Xid 13 (graphics engine exception) on GPU 3 of sim-1: application fault, "
                                + "the device stays in service; no run held it"),
                scenario("a restarted recovery decides nothing twice and still knows the cordoned device",
                        s -> s.granted("job-1", 1, "sim-1:3").xid("f1", "sim-1", 3, 79, 5).restart(10)
                                .xid("f1", "sim-1", 3, 79, 5).xid("f2", "sim-1", 3, 95, 11),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned; stops job job-1 attempt 1"),
                scenario("a run stopped by a device fault is requeued with the device named, within the job's budget",
                        s -> s.xid("f1", "sim-1", 3, 79, 5).deviceFaultRelease("job-1", 1, "sim-1")
                                .nodeFailure("job-1", 2, "sim-2").deviceFaultRelease("job-1", 3, "sim-1")
                                .deviceFaultRelease("job-1", 4, "sim-1"),
                        "CORDON_DEVICE sim-1#3: Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1: hardware "
                                + "fault; GPU 3 cordoned",
                        "JobRequeued job-1#1: GPU 3 of sim-1 failed (Xid 79: GPU has fallen off the bus); restart 1 "
                                + "of 3",
                        "JobRequeued job-1#2: a node of the allocation failed; restart 2 of 3",
                        "JobRequeued job-1#3: GPU 3 of sim-1 failed (Xid 79: GPU has fallen off the bus); restart 3 "
                                + "of 3",
                        "JobRecoveryAbandoned job-1#4: GPU 3 of sim-1 failed (Xid 79: GPU has fallen off the bus); "
                                + "restart limit 3 reached"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void faults(UnaryOperator<RecoveryScenario> steps, List<String> expected) {
        RecoveryScenario s = steps.apply(aRecovery().build());
        assertThat(s.published()).containsExactlyElementsOf(expected);
    }

    @Test
    void byPolicyAHardwareFaultCordonsTheWholeNodeAndStopsTheRunsHoldingTheGpu() {
        RecoveryScenario s = aRecovery().cordonNodes().build().granted("job-1", 1, "sim-1:2").granted("job-2", 1, "sim-1:5")
                .xid("f1", "sim-1", 2, 79, 5).xid("f2", "sim-1", 2, 79, 6);
        assertThat(s.published()).containsExactly("CORDON_NODE sim-1#2: Xid 79 (GPU has fallen off the bus) on GPU 2 of "
                + "sim-1: hardware fault; node cordoned; stops job job-1 attempt 1");
    }

    @Test
    void theJoinNamesEveryRunOnTheDeviceIncludingSharedOnes() {
        Recovery core = aRecovery().build().granted("a", 1, "sim-1:0,1").granted("b", 2, "sim-1:1")
                .granted("c", 1, "sim-2:1").core();
        assertThat(core.runsHit("sim-1", 1)).containsExactly("a", "b");
        assertThat(core.runsHit("sim-1", 0)).containsExactly("a");
        assertThat(core.runsHit("sim-1", null)).containsExactly("a", "b");
        assertThat(core.runsHit("sim-3", null)).isEmpty();
    }

    @Test
    void aCordonedDeviceIsKnownUntilARegistrationShowsItBack() {
        RecoveryScenario s = aRecovery().build().xid("f1", "sim-1", 3, 79, 5);
        assertThat(s.core().cordonedGpus("sim-1")).containsExactly(3);
        s.registered("sim-1", 7, false);
        assertThat(s.core().cordonedGpus("sim-1")).isEmpty();
    }

    @Test
    void whatIsOutOfServiceIsListedPerNodeUntilPlacementShowsItBack() {
        RecoveryScenario s = aRecovery().drainAfter(2, 3600).build().xid("f1", "sim-1", 3, 79, 5)
                .xid("f2", "sim-2", 0, 48, 5).xid("f3", "sim-2", 1, 48, 6);
        assertThat(s.core().outOfService()).containsExactly(
                new Recovery.OutOfService("sim-1", List.of(3), false, false),
                new Recovery.OutOfService("sim-2", List.of(0, 1), true, true));
        s.registered("sim-2", 10, false);
        assertThat(s.core().outOfService()).extracting(Recovery.OutOfService::nodeId).containsExactly("sim-1");
    }

    @Test
    void aReportWithoutItsXidCodeIsRejectedBeforeAnythingChanges() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DeviceFaultReport("e", "sim-1", 0, FaultKind.XID,
                null, "", RecoveryScenario.at(0))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("xid");
    }

    @Test
    void aFaultReportedLateFromBeforeTheNodesLastDrainIsStillDecided() {
        // the node drains at 6 s on its second fault; a report of a fault at 2 s arrives after that (it was
        // dead-lettered: counting the faults since the drain failed on a window that ended before it began)
        RecoveryScenario s = aRecovery().drainAfter(2, 3600).build().xid("f1", "sim-2", 0, 48, 5)
                .xid("f2", "sim-2", 1, 48, 6);
        assertThat(s.core().drained("sim-2")).isTrue();

        s.xid("f0", "sim-2", 2, 48, 2);

        assertThat(s.core().cordonedGpus("sim-2")).contains(2);
    }
}
