package io.gantry.placement.backend.slurm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Slurm's output as recorded from slurm-wlm 22.05 (files under resources/slurm) and as documented (inline). */
class SlurmOutputTest {

    static String sample(String name) {
        try (InputStream in = SlurmOutputTest.class.getResourceAsStream("/slurm/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void anIdleNodeIsReadWithItsGpusFeaturesAndPartition() {
        SlurmOutput.Node n = SlurmOutput.nodes(sample("node-idle.txt")).get(0);
        assertThat(n.name()).isEqualTo("vm");
        assertThat(n.states()).containsExactly("IDLE");
        assertThat(n.failing()).isFalse();
        assertThat(n.cpus()).isEqualTo(4);
        assertThat(n.sockets()).isEqualTo(2);
        assertThat(n.realMemoryMiB()).isEqualTo(8192);
        assertThat(n.gres()).containsExactly(new SlurmOutput.Gres("gpu", "h100", 8, List.of(0, 1)));
        assertThat(n.features()).containsExactly("rack_r1", "spine_s1");
        assertThat(n.partitions()).containsExactly("gantry");
    }

    @Test
    void aDrainedNodeIsAFailureSignalWithItsReason() {
        SlurmOutput.Node n = SlurmOutput.nodes(sample("node-drained.txt")).get(0);
        assertThat(n.states()).containsExactlyInAnyOrder("IDLE", "DRAIN");
        assertThat(n.failing()).isTrue();
        assertThat(n.reason()).startsWith("disk failed [root@");
    }

    static Stream<Arguments> nodeStates() {
        return Stream.of(
                Arguments.of("IDLE", false),
                Arguments.of("MIXED", false),
                Arguments.of("ALLOCATED", false),
                Arguments.of("MIXED+DRAIN", true),
                Arguments.of("DOWN+NOT_RESPONDING", true),
                Arguments.of("DOWN*", true),
                Arguments.of("IDLE+NOT_RESPONDING", true),
                Arguments.of("ALLOCATED+COMPLETING", false),
                Arguments.of("IDLE+POWERED_DOWN", true),
                Arguments.of("FAIL", true));
    }

    @ParameterizedTest(name = "node state {0}: failing = {1}")
    @MethodSource("nodeStates")
    void nodeStatesThatStopHeartbeats(String state, boolean failing) {
        SlurmOutput.Node n = SlurmOutput.nodes("NodeName=g1 CPUTot=8 State=" + state + " Partitions=gantry").get(0);
        assertThat(n.failing()).isEqualTo(failing);
    }

    static Stream<Arguments> gres() {
        return Stream.of(
                Arguments.of("gpu:h100:8(S:0-1)", List.of(new SlurmOutput.Gres("gpu", "h100", 8, List.of(0, 1)))),
                Arguments.of("gpu:8", List.of(new SlurmOutput.Gres("gpu", null, 8, List.of()))),
                Arguments.of("gpu:a100:4(S:0),gpu:a100:4(S:1)", List.of(
                        new SlurmOutput.Gres("gpu", "a100", 4, List.of(0)),
                        new SlurmOutput.Gres("gpu", "a100", 4, List.of(1)))),
                Arguments.of("gpu:l4:2,nvme:1", List.of(new SlurmOutput.Gres("gpu", "l4", 2, List.of()),
                        new SlurmOutput.Gres("nvme", null, 1, List.of()))),
                Arguments.of("(null)", List.of()),
                Arguments.of("", List.of()));
    }

    @ParameterizedTest(name = "gres {0}")
    @MethodSource("gres")
    void gresLinesAreReadWithTypeCountAndSockets(String value, List<SlurmOutput.Gres> expected) {
        assertThat(SlurmOutput.gres(value)).isEqualTo(expected);
    }

    @Test
    void theQueueKeepsFreeTextNameAndCommentLast() {
        List<SlurmOutput.QueuedJob> jobs = SlurmOutput.queue(sample("squeue-mixed.txt"));
        assertThat(jobs).hasSize(5);
        SlurmOutput.QueuedJob failed = jobs.get(3);
        assertThat(failed.jobId()).isEqualTo("1");
        assertThat(failed.state()).isEqualTo("FAILED");
        assertThat(failed.reason()).isEqualTo("NonZeroExitCode");
        assertThat(failed.nodes()).containsExactly("vm");
        assertThat(failed.gres()).isEqualTo("gres:gpu:h100:2");
        assertThat(failed.name()).isEqualTo("gantry-a1");
        assertThat(jobs.get(4).comment()).isEqualTo("gantry/a2/0/w x|y");
    }

    @Test
    void aPendingJobHasNoNodesAndAMultiNodeJobsHostlistIsExpanded() {
        List<SlurmOutput.QueuedJob> jobs = SlurmOutput.queue("""
                17|PENDING|alice|batch||Resources|gres:gpu:4|train|(null)
                18|RUNNING|bob|batch|g[01-03,07]|None|gres:gpu:a100:8|big run|x
                No jobs in the system
                """);
        assertThat(jobs).hasSize(2);
        assertThat(jobs.get(0).nodes()).isEmpty();
        assertThat(jobs.get(1).nodes()).containsExactly("g01", "g02", "g03", "g07");
        assertThat(SlurmOutput.gpusPerNode(jobs.get(1).gres())).isEqualTo(8);
    }

    @Test
    void aFailedJobsExitCodeAndAKilledJobsSignalAreRead() {
        SlurmOutput.FinishedJob failed = SlurmOutput.jobs(sample("job-failed-exit3.txt")).get(0);
        assertThat(failed).isEqualTo(new SlurmOutput.FinishedJob("1", "gantry-a1", "FAILED", "NonZeroExitCode", 3, 0));
        SlurmOutput.FinishedJob killed = SlurmOutput.jobs(sample("job-cancelled-sigterm.txt")).get(0);
        assertThat(killed.exitCode()).isZero();
        assertThat(killed.signal()).isEqualTo(15);
    }

    @Test
    void sacctSkipsStepsAndReadsCancelledBy() {
        List<SlurmOutput.FinishedJob> jobs = SlurmOutput.sacct("""
                42|gantry-a-0|COMPLETED|0:0
                42.batch|batch|COMPLETED|0:0
                43|gantry-a-1|CANCELLED by 0|0:15
                """);
        assertThat(jobs).containsExactly(new SlurmOutput.FinishedJob("42", "gantry-a-0", "COMPLETED", "", 0, 0),
                new SlurmOutput.FinishedJob("43", "gantry-a-1", "CANCELLED", "", 0, 15));
    }

    @Test
    void aPartitionRestrictedToAGroupIsNotOpenToAll() {
        SlurmOutput.Partition p = SlurmOutput.partitions(sample("partitions-restricted.txt")).get(0);
        assertThat(p.name()).isEqualTo("gantry");
        assertThat(p.nodes()).containsExactly("vm");
        assertThat(p.allowGroups()).isEqualTo("root");
        assertThat(p.openToAll()).isFalse();
        SlurmOutput.Partition open = SlurmOutput.partitions("PartitionName=batch AllowGroups=ALL AllowAccounts=ALL "
                + "AllowQos=ALL Nodes=g[1-2]").get(0);
        assertThat(open.openToAll()).isTrue();
        assertThat(open.nodes()).containsExactly("g1", "g2");
    }

    @Test
    void topologySwitchesListTheirNodesAndChildSwitches() {
        List<SlurmOutput.Switch> switches = SlurmOutput.topology("""
                SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=g[01-02]
                SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=g[03-04]
                SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=g[01-04] Switches=leaf[1-2]
                """);
        assertThat(switches).hasSize(3);
        assertThat(switches.get(0).nodes()).containsExactly("g01", "g02");
        assertThat(switches.get(2).switches()).containsExactly("leaf1", "leaf2");
        assertThat(switches.get(2).level()).isEqualTo(1);
    }

    static Stream<Arguments> hostlists() {
        return Stream.of(
                Arguments.of("vm", List.of("vm")),
                Arguments.of("g[1-3]", List.of("g1", "g2", "g3")),
                Arguments.of("g[08-10],login", List.of("g08", "g09", "g10", "login")),
                Arguments.of("r[1-2]n[1-2]", List.of("r1n1", "r1n2", "r2n1", "r2n2")),
                Arguments.of("(null)", List.of()),
                Arguments.of("", List.of()));
    }

    @ParameterizedTest(name = "hostlist {0}")
    @MethodSource("hostlists")
    void hostlistsAreExpanded(String hostlist, List<String> names) {
        assertThat(SlurmOutput.hostnames(hostlist)).isEqualTo(names);
    }

    @Test
    void jobStatesThatNoLongerChangeAreTerminal() {
        for (String s : Set.of("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")) {
            assertThat(SlurmOutput.terminal(s)).as(s).isTrue();
        }
        for (String s : Set.of("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED")) {
            assertThat(SlurmOutput.terminal(s)).as(s).isFalse();
        }
    }
}
