package io.gantry.queue.kafka;

import io.gantry.events.CheckpointPolicy;
import io.gantry.events.JobSpec;
import io.gantry.events.TaskSpec;
import io.gantry.events.TopologyConstraint;
import io.gantry.events.TopologyLevel;
import io.gantry.queue.core.TaskGroup;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The queue decides on a job's shape, and forwards the spec as it was submitted: everything placement and the tasks
 * need (commands, run times, GPU memory, topology, checkpoint and placement policy) reaches placement unchanged, with
 * the flavour the queue chose.
 */
class ForwardedSpecTest {
    private static JobSpec submitted() {
        TaskSpec worker = TaskSpec.newBuilder().setName("worker").setReplicas(2).setCommand(List.of("torchrun", "x.py"))
                .setGpus(4).setGpuModel(null).setCpuMillis(8000).setMemoryMiB(65536L).setRunSeconds(3600L)
                .setGpuModels(List.of("H100", "A100")).setGpuTier(null).setGpuMilli(null).setGpuMemoryMiB(null)
                .setMigProfile(null).build();
        TaskSpec infer = TaskSpec.newBuilder().setName("infer").setReplicas(1).setCommand(List.of("serve"))
                .setGpus(0).setGpuModel(null).setCpuMillis(1000).setMemoryMiB(4096L).setRunSeconds(null)
                .setGpuModels(List.of()).setGpuTier(null).setGpuMilli(500).setGpuMemoryMiB(8192L)
                .setMigProfile(null).build();
        return JobSpec.newBuilder().setName("train").setPriority(3).setTimeLimitSeconds(7200L)
                .setTasks(List.of(worker, infer)).setQueue("vision").setPriorityClass("production")
                .setPlacementPolicy("spread")
                .setTopology(new TopologyConstraint(TopologyLevel.CLUSTER, TopologyLevel.RACK))
                .setCheckpoint(new CheckpointPolicy("/ckpt/train", 1800L)).build();
    }

    @Test
    void theCoreKeepsOnlyWhatItDecidesOn() {
        io.gantry.queue.core.JobSpec core = WireMapping.toSpec(submitted());

        assertThat(core.tasks()).extracting(TaskGroup::name, TaskGroup::gpus, TaskGroup::gpuMilli)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("worker", 4, null),
                        org.assertj.core.groups.Tuple.tuple("infer", 0, 500));
        assertThat(core.queue()).isEqualTo("vision");
        assertThat(core.gangMilli()).as("2 x 4 GPUs and half a GPU").isEqualTo(2 * 4000 + 500);
    }

    @Test
    void aDispatchForwardsTheSubmittedSpecWithTheChosenFlavourAndNothingElseChanged() {
        JobSpec original = submitted();
        io.gantry.queue.core.JobSpec decided = WireMapping.toSpec(original);
        // the queue took the worker's quota on H100: the group is pinned there (as QueueCore does on dispatch)
        io.gantry.queue.core.JobSpec pinned = new io.gantry.queue.core.JobSpec(decided.name(), decided.priority(),
                decided.timeLimitSeconds(), List.of(new TaskGroup("worker", 2, 4, "H100", 8000, 65536L, List.of(),
                null, null, null), decided.tasks().get(1)), decided.queue(), decided.priorityClass());

        JobSpec forwarded = WireMapping.forward(original, pinned);

        assertThat(forwarded.getTasks().get(0).getGpuModel()).isEqualTo("H100");
        assertThat(forwarded.getTasks().get(0).getGpuModels()).isEmpty();
        JobSpec expected = JobSpec.newBuilder(original).setTasks(List.of(
                TaskSpec.newBuilder(original.getTasks().get(0)).setGpuModel("H100").setGpuModels(List.of()).build(),
                original.getTasks().get(1))).build();
        assertThat(forwarded).isEqualTo(expected);
        assertThat(WireMapping.forward(original, decided)).as("nothing decided: the spec as submitted")
                .isEqualTo(original);
    }

    @Test
    void withoutTheSubmittedSpecNothingIsForwarded() {
        assertThatThrownBy(() -> WireMapping.forward(null, WireMapping.toSpec(submitted())))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no submitted spec");
    }
}
