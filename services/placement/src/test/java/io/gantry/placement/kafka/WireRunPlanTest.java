package io.gantry.placement.kafka;

import io.gantry.events.JobSpec;
import io.gantry.events.SuccessPolicy;
import io.gantry.events.TaskMount;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.RunPlan;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The run plan a dispatched spec becomes: everything each task runs with, and the gang's success policy. */
class WireRunPlanTest {

    @Test
    void aTasksEnvironmentWorkingDirectoryImageMountsAndTheSuccessPolicyReachThePlan() {
        TaskSpec launcher = TaskSpec.newBuilder().setName("launcher").setReplicas(1).setCommand(List.of("mpirun"))
                .setGpus(0).setCpuMillis(1000).setMemoryMiB(1024).setEnv(Map.of("OMP_NUM_THREADS", "4"))
                .setWorkingDir("/workspace").setImage("nvcr.io/nvidia/pytorch:24.05-py3")
                .setMounts(List.of(new TaskMount("/data", null, "datasets", true))).build();
        TaskSpec worker = TaskSpec.newBuilder().setName("worker").setReplicas(2).setCommand(List.of("sleep", "inf"))
                .setGpus(8).setCpuMillis(1000).setMemoryMiB(1024).build();
        JobSpec spec = JobSpec.newBuilder().setName("mpi").setPriority(0).setTasks(List.of(launcher, worker))
                .setSuccessPolicy(new SuccessPolicy("launcher")).build();

        RunPlan plan = WireMapping.plan(spec);

        assertThat(plan.successLeader()).isEqualTo("launcher");
        assertThat(plan.task("launcher")).isEqualTo(new RunPlan.Task(List.of("mpirun"), null,
                Map.of("OMP_NUM_THREADS", "4"), "/workspace", "nvcr.io/nvidia/pytorch:24.05-py3",
                List.of(new RunPlan.Mount("/data", null, "datasets", true))));
        assertThat(plan.task("worker").env()).isEmpty();
        assertThat(plan.task("worker").mounts()).isEmpty();
        assertThat(plan.task("worker").image()).isNull();
        assertThat(WireMapping.plan(JobSpec.newBuilder(spec).setSuccessPolicy(null).build()).successLeader())
                .isNull();
    }
}
