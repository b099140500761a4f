package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.gantry.admission.core.SpecTrees.aJob;
import static io.gantry.admission.core.SpecTrees.aTask;
import static io.gantry.admission.core.SpecTrees.cluster;
import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** What each task runs with (environment, working directory, image, mounts) and the gang's success policy. */
class TaskRuntimeFieldsTest {
    private static final ClusterLimits CLUSTER = cluster(List.of(gpus(8, "H100")));
    private final JobSpecValidator validator = new JobSpecValidator();

    private static Map<String, Object> env(Object... namesAndValues) {
        Map<String, Object> env = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            env.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return env;
    }

    private static Map<String, Object> mount(Object... fieldsAndValues) {
        return env(fieldsAndValues);
    }

    private static Object withTask(SpecTrees.TaskTree task) {
        return aJob().noTasks().task(task).build();
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                arguments("an environment given as a list", withTask(aTask("w").set("env", List.of("A=1"))),
                        "tasks[0].env", "must be an object of variable names to string values"),
                arguments("a variable name starting with a digit", withTask(aTask("w").set("env", env("1X", "a"))),
                        "tasks[0].env.1X", "is not a variable name"),
                arguments("a variable name with a dash", withTask(aTask("w").set("env", env("MY-VAR", "a"))),
                        "tasks[0].env.MY-VAR", "is not a variable name"),
                arguments("an empty variable name", withTask(aTask("w").set("env", env("", "a"))),
                        "tasks[0].env.", "is not a variable name"),
                arguments("a GANTRY_ variable", withTask(aTask("w").set("env", env("GANTRY_RANK", "0"))),
                        "tasks[0].env.GANTRY_RANK", "names starting with GANTRY_ are reserved"),
                arguments("a SLURM_ variable", withTask(aTask("w").set("env", env("SLURM_JOB_ID", "1"))),
                        "tasks[0].env.SLURM_JOB_ID", "names starting with SLURM_ are reserved"),
                arguments("overriding the visible GPUs",
                        withTask(aTask("w").set("env", env("CUDA_VISIBLE_DEVICES", "0,1"))),
                        "tasks[0].env.CUDA_VISIBLE_DEVICES", "is set by Gantry itself"),
                arguments("overriding the container's GPUs",
                        withTask(aTask("w").set("env", env("NVIDIA_VISIBLE_DEVICES", "all"))),
                        "tasks[0].env.NVIDIA_VISIBLE_DEVICES", "is set by Gantry itself"),
                arguments("overriding the rendezvous address",
                        withTask(aTask("w").set("env", env("MASTER_ADDR", "10.0.0.1"))),
                        "tasks[0].env.MASTER_ADDR", "is set by Gantry itself"),
                arguments("overriding the rank", withTask(aTask("w").set("env", env("RANK", "3"))),
                        "tasks[0].env.RANK", "is set by Gantry itself"),
                arguments("a number as a value", withTask(aTask("w").set("env", env("OMP_NUM_THREADS", 4))),
                        "tasks[0].env.OMP_NUM_THREADS", "quote numbers and booleans"),
                arguments("a null value", withTask(aTask("w").set("env", env("FOO", null))),
                        "tasks[0].env.FOO", "give \"\" for an empty value"),
                arguments("a value with a NUL character", withTask(aTask("w").set("env", env("FOO", "a\0b"))),
                        "tasks[0].env.FOO", "NUL character"),
                arguments("a value longer than 32 KiB",
                        withTask(aTask("w").set("env", env("FOO", "x".repeat(32 * 1024 + 1)))),
                        "tasks[0].env.FOO", "at most 32768 characters"),
                arguments("a variable name longer than 256 characters",
                        withTask(aTask("w").set("env", env("A".repeat(257), "x"))),
                        "tasks[0].env." + "A".repeat(257), "at most 256 characters"),
                arguments("129 variables", withTask(aTask("w").set("env", many(129, 1))), "tasks[0].env",
                        "at most 128 variables, not 129"),
                arguments("more than 256 KiB of variables in all", aJob().noTasks()
                                .task(aTask("a").set("env", many(128, 1100))).task(aTask("b").set("env", many(128, 1100)))
                                .build(), "tasks", "more than 262144"),
                arguments("a relative working directory", withTask(aTask("w").set("workingDir", "src")),
                        "tasks[0].workingDir", "must be an absolute path"),
                arguments("a working directory climbing out", withTask(aTask("w").set("workingDir", "/data/../etc")),
                        "tasks[0].workingDir", "without `..`"),
                arguments("a working directory that is a number", withTask(aTask("w").set("workingDir", 5)),
                        "tasks[0].workingDir", "must be a string"),
                arguments("an image with a space", withTask(aTask("w").set("image", "pytorch/pytorch latest")),
                        "tasks[0].image", "must be a container image reference"),
                arguments("an image with upper-case path", withTask(aTask("w").set("image", "PyTorch/PyTorch")),
                        "tasks[0].image", "must be a container image reference"),
                arguments("an image with an empty tag", withTask(aTask("w").set("image", "pytorch:")),
                        "tasks[0].image", "must be a container image reference"),
                arguments("an image that is not a string", withTask(aTask("w").set("image", List.of("a"))),
                        "tasks[0].image", "must be a container image reference"),
                arguments("mounts given as an object", withTask(aTask("w").set("mounts", mount("mountPath", "/d"))),
                        "tasks[0].mounts", "must be an array of mounts"),
                arguments("a mount without a path", withTask(aTask("w").set("mounts",
                        List.of(mount("hostPath", "/data")))), "tasks[0].mounts[0].mountPath", "is required"),
                arguments("a mount at a relative path", withTask(aTask("w").set("mounts",
                                List.of(mount("mountPath", "data", "hostPath", "/data")))),
                        "tasks[0].mounts[0].mountPath", "must be an absolute path"),
                arguments("a mount over the root", withTask(aTask("w").set("mounts",
                        List.of(mount("mountPath", "/", "hostPath", "/data")))), "tasks[0].mounts[0].mountPath",
                        "must not be /"),
                arguments("a mount with neither a host path nor a claim", withTask(aTask("w").set("mounts",
                        List.of(mount("mountPath", "/data")))), "tasks[0].mounts[0].hostPath",
                        "exactly one of hostPath and claim"),
                arguments("a mount with both a host path and a claim", withTask(aTask("w").set("mounts",
                                List.of(mount("mountPath", "/data", "hostPath", "/data", "claim", "datasets")))),
                        "tasks[0].mounts[0].hostPath", "exactly one of hostPath and claim"),
                arguments("a claim name with upper case", withTask(aTask("w").set("mounts",
                        List.of(mount("mountPath", "/data", "claim", "DataSets")))), "tasks[0].mounts[0].claim",
                        "persistent volume claim's name"),
                arguments("a relative host path", withTask(aTask("w").set("mounts",
                        List.of(mount("mountPath", "/data", "hostPath", "data")))), "tasks[0].mounts[0].hostPath",
                        "must be an absolute path"),
                arguments("readOnly given as a string", withTask(aTask("w").set("mounts",
                                List.of(mount("mountPath", "/data", "claim", "datasets", "readOnly", "yes")))),
                        "tasks[0].mounts[0].readOnly", "must be true or false"),
                arguments("an unknown mount field", withTask(aTask("w").set("mounts",
                                List.of(mount("mountPath", "/data", "claim", "datasets", "subPath", "x")))),
                        "tasks[0].mounts[0].subPath", "unknown field"),
                arguments("two mounts at the same path", withTask(aTask("w").set("mounts",
                                List.of(mount("mountPath", "/data", "claim", "a"), mount("mountPath", "/data/",
                                        "claim", "b")))),
                        "tasks[0].mounts[1].mountPath", "duplicate mount path '/data/' (also tasks[0].mounts[0])"),
                arguments("33 mounts", withTask(aTask("w").set("mounts", java.util.stream.IntStream.range(0, 33)
                                .mapToObj(i -> mount("mountPath", "/m" + i, "claim", "c" + i)).toList())),
                        "tasks[0].mounts", "at most 32 mounts, not 33"),
                arguments("a success policy naming an unknown task group",
                        aJob().set("successPolicy", Map.of("leader", "launcher")).build(), "successPolicy.leader",
                        "names no task group of this job: 'launcher' (task groups: [worker])"),
                arguments("a success policy without a leader", aJob().set("successPolicy", Map.of()).build(),
                        "successPolicy.leader", "is required"),
                arguments("a success policy given as a string", aJob().set("successPolicy", "leader").build(),
                        "successPolicy", "must be an object with `leader`"),
                arguments("a leader that is not a string", aJob().set("successPolicy", Map.of("leader", 1)).build(),
                        "successPolicy.leader", "must be a string"),
                arguments("an unknown success policy field",
                        aJob().set("successPolicy", Map.of("leader", "worker", "count", 1)).build(),
                        "successPolicy.count", "unknown field"));
    }

    private static Map<String, Object> many(int count, int valueLength) {
        Map<String, Object> env = new HashMap<>();
        for (int i = 0; i < count; i++) {
            env.put("V" + i, "x".repeat(valueLength));
        }
        return env;
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refused")
    void refusesABadRuntimeFieldNamingIt(String description, Object tree, String field, String message) {
        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.isValid()).isFalse();
        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    static Stream<Arguments> images() {
        return Stream.of(arguments("busybox"), arguments("busybox:1.36"), arguments("pytorch/pytorch:2.3.0-cuda12.1"),
                arguments("nvcr.io/nvidia/pytorch:24.05-py3"), arguments("localhost:5000/team/trainer"),
                arguments("registry.example.com:5000/team/my_trainer__v2:1.4"),
                arguments("ghcr.io/org/img@sha256:" + "a".repeat(64)),
                arguments("ghcr.io/org/img:v1@sha256:" + "0123456789abcdef".repeat(4)));
    }

    @ParameterizedTest(name = "accepts the image {0}")
    @MethodSource("images")
    void acceptsTheImageReferencesRegistriesTake(String image) {
        Validated v = validator.validate(withTask(aTask("w").set("image", image)), CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().tasks().get(0).image()).isEqualTo(image);
    }

    @Test
    void carriesEnvironmentWorkingDirectoryImageAndMountsIntoTheSpecAndShowsThemBack() {
        Object tree = aJob().set("successPolicy", Map.of("leader", "launcher")).noTasks()
                .task(aTask("launcher").set("env", env("OMP_NUM_THREADS", "4", "NCCL_DEBUG", "INFO", "EMPTY", "",
                                "PATH", "/opt/venv/bin:/usr/bin"))
                        .set("workingDir", "/workspace/train").set("image", "nvcr.io/nvidia/pytorch:24.05-py3")
                        .set("mounts", List.of(mount("mountPath", "/data", "claim", "datasets", "readOnly", true),
                                mount("mountPath", "/scratch", "hostPath", "/mnt/nvme"))))
                .task(aTask("worker").set("replicas", 2))
                .build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).isEmpty();
        TaskSpec launcher = v.spec().tasks().get(0);
        assertThat(launcher.env()).containsExactly(Map.entry("EMPTY", ""), Map.entry("NCCL_DEBUG", "INFO"),
                Map.entry("OMP_NUM_THREADS", "4"), Map.entry("PATH", "/opt/venv/bin:/usr/bin"));
        assertThat(launcher.workingDir()).isEqualTo("/workspace/train");
        assertThat(launcher.image()).isEqualTo("nvcr.io/nvidia/pytorch:24.05-py3");
        assertThat(launcher.mounts()).containsExactly(new TaskSpec.Mount("/data", null, "datasets", true),
                new TaskSpec.Mount("/scratch", "/mnt/nvme", null, false));
        assertThat(v.spec().successPolicy()).isEqualTo(new JobSpec.SuccessPolicy("launcher"));
        TaskSpec worker = v.spec().tasks().get(1);
        assertThat(worker.env()).isEmpty();
        assertThat(worker.workingDir()).isNull();
        assertThat(worker.image()).isNull();
        assertThat(worker.mounts()).isEmpty();

        Map<String, Object> shown = JobSpecTree.toTree(v.spec());
        assertThat(shown.get("successPolicy")).isEqualTo(Map.of("leader", "launcher"));
        @SuppressWarnings("unchecked")
        Map<String, Object> shownTask = (Map<String, Object>) ((List<Object>) shown.get("tasks")).get(0);
        assertThat(shownTask).containsEntry("workingDir", "/workspace/train")
                .containsEntry("image", "nvcr.io/nvidia/pytorch:24.05-py3")
                .containsEntry("mounts", List.of(
                        Map.of("mountPath", "/data", "claim", "datasets", "readOnly", true),
                        Map.of("mountPath", "/scratch", "hostPath", "/mnt/nvme", "readOnly", false)));
        assertThat(validator.validate(shown, CLUSTER).spec()).isEqualTo(v.spec());
    }

    @Test
    void theSameVariablesInAnotherOrderAreTheSameSpec() {
        Object one = withTask(aTask("w").set("env", env("A", "1", "B", "2")));
        Object other = withTask(aTask("w").set("env", env("B", "2", "A", "1")));

        JobSpec a = validator.validate(one, CLUSTER).spec();
        JobSpec b = validator.validate(other, CLUSTER).spec();

        assertThat(a).isEqualTo(b);
        assertThat(JobSpecTree.toTree(a)).isEqualTo(JobSpecTree.toTree(b));
    }

    @Test
    void acceptsTheLargestEnvironmentExactly() {
        Map<String, Object> env = many(128, 1);
        env.put("V0", "x".repeat(32 * 1024));
        env.put("A".repeat(256), "");

        env.remove("V1");
        Validated v = validator.validate(withTask(aTask("w").set("env", env)), CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().tasks().get(0).env()).hasSize(128);
    }

    @Test
    void aSpecWithoutRuntimeFieldsShowsNoneOfThem() {
        Validated v = validator.validate(aJob().build(), CLUSTER);

        Map<String, Object> shown = JobSpecTree.toTree(v.spec());
        assertThat(shown).doesNotContainKey("successPolicy");
        @SuppressWarnings("unchecked")
        Map<String, Object> shownTask = (Map<String, Object>) ((List<Object>) shown.get("tasks")).get(0);
        assertThat(shownTask).doesNotContainKeys("env", "workingDir", "image", "mounts");
    }
}
