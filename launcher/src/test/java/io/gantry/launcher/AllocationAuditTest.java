package io.gantry.launcher;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuShare;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The check the broker chaos test relies on finds what it must find, and nothing else. */
class AllocationAuditTest {
    private static final Instant T = Instant.parse("2026-11-26T10:00:00Z");

    @Test
    void aGpuGrantedAgainAfterItsReleaseIsFine() {
        var r = AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 0, 1), released("j1", 1, "a1"),
                granted("j2", 1, "a2", "n1", 1, 2), released("j2", 1, "a2")));

        assertThat(r.violations()).isEmpty();
        assertThat(r.grants()).isEqualTo(2);
        assertThat(r.releases()).isEqualTo(2);
        assertThat(r.mostGpusHeld()).isEqualTo(2);
        assertThat(r.stillHeld()).isEmpty();
    }

    @Test
    void aGpuGrantedToTwoRunsAtOnceIsReported() {
        var r = AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 0, 1), granted("j2", 1, "a2", "n1", 1)));

        assertThat(r.violations()).containsExactly("n1/gpu1 granted to a2 (j2 attempt 1) while a1 held it");
        assertThat(r.stillHeld()).containsExactlyInAnyOrder("a1", "a2");
    }

    @Test
    void theSameGpuIndexOnAnotherNodeIsAnotherGpu() {
        assertThat(AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 0), granted("j2", 1, "a2", "n2", 0)))
                .violations()).isEmpty();
    }

    @Test
    void aRunGrantedTwiceIsReportedEvenOnOtherGpus() {
        var r = AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 0), released("j1", 1, "a1"),
                granted("j1", 1, "a2", "n2", 0), granted("j1", 2, "a3", "n3", 0)));

        assertThat(r.violations()).containsExactly("run j1 attempt 1 granted twice");
    }

    @Test
    void aReleaseOfNothingHeldIsReported() {
        var r = AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 0), released("j9", 1, "a9")));

        assertThat(r.violations()).containsExactly("allocation a9 of job j9 released but not held");
        assertThat(r.jobsInViolation()).containsExactly("j9");
    }

    @Test
    void twoHalvesOfOneGpuFitAndAThirdShareOrAWholeGrantDoesNot() {
        var r = AllocationAudit.of(List.of(shared("j1", "a1", "n1", 0, 500), shared("j2", "a2", "n1", 0, 500),
                shared("j3", "a3", "n1", 0, 1), granted("j4", 1, "a4", "n1", 0), released("j1", 1, "a1"),
                shared("j5", "a5", "n1", 0, 500)));

        assertThat(r.violations()).containsExactly(
                "n1/gpu0 granted to a3 (j3 attempt 1, 1 thousandths) while a1 (500 thousandths) and a2 (500 thousandths)"
                        + " held it",
                "n1/gpu0 granted to a4 (j4 attempt 1) while a1 (500 thousandths) and a2 (500 thousandths) held it");
        assertThat(r.stillHeld()).containsExactlyInAnyOrder("a2", "a3", "a4", "a5");
        assertThat(r.mostGpusHeld()).isEqualTo(1);
    }

    @Test
    void aShareOfAGpuHeldWholeIsReported() {
        assertThat(AllocationAudit.of(List.of(granted("j1", 1, "a1", "n1", 3), shared("j2", "a2", "n1", 3, 250)))
                .violations()).containsExactly("n1/gpu3 granted to a2 (j2 attempt 1, 250 thousandths) while a1 held it");
    }

    private static AllocationEvent shared(String job, String allocation, String node, int gpu, int milli) {
        TaskPlacement p = TaskPlacement.newBuilder(placement(node))
                .setGpuShares(List.of(GpuShare.newBuilder().setIndex(gpu).setMilli(milli).setMemoryMiB(1024).build()))
                .build();
        return event(job, AllocationGranted.newBuilder().setAllocationId(allocation).setTenant("t").setAttempt(1)
                .setPlacements(List.of(p)).setGrantedAt(T).setBackend("simulated").build());
    }

    private static AllocationEvent granted(String job, int attempt, String allocation, String node, int... gpus) {
        return event(job, AllocationGranted.newBuilder().setAllocationId(allocation).setTenant("t").setAttempt(attempt)
                .setPlacements(List.of(placement(node, gpus))).setGrantedAt(T).setBackend("simulated").build());
    }

    private static AllocationEvent released(String job, int attempt, String allocation) {
        return event(job, AllocationReleased.newBuilder().setAllocationId(allocation).setTenant("t").setAttempt(attempt)
                .setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(T).setReleasedAt(T).setPlacements(List.of())
                .setBackend("simulated").build());
    }

    private static TaskPlacement placement(String node, int... gpus) {
        return TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId(node).setGpuModel("H100")
                .setGpuIndices(java.util.Arrays.stream(gpus).boxed().toList()).setCpuMillis(1000).setMemoryMiB(1024)
                .build();
    }

    private static AllocationEvent event(String job, Object payload) {
        return AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(T)
                .setPayload(payload).build();
    }
}
