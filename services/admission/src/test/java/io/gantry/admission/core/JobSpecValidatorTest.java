package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static io.gantry.admission.core.SpecTrees.aJob;
import static io.gantry.admission.core.SpecTrees.aTask;
import static io.gantry.admission.core.SpecTrees.cluster;
import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class JobSpecValidatorTest {
    /** One node with 8 H100s, one with 4 A100s. */
    private static final ClusterLimits CLUSTER = cluster(List.of(gpus(8, "H100"), gpus(4, "A100")));
    private static final ClusterLimits EMPTY = ClusterLimits.none();

    private final JobSpecValidator validator = new JobSpecValidator();

    static Stream<Arguments> rejected() {
        return Stream.of(
                bad("a JSON array instead of an object", List.of(1, 2), CLUSTER,
                        "body", "must be a JSON object"),
                bad("a missing name", aJob().without("name").build(), CLUSTER, "name", "is required"),
                bad("a name that is a number", aJob().set("name", 7).build(), CLUSTER, "name", "must be a string"),
                bad("a blank name", aJob().set("name", "  ").build(), CLUSTER, "name", "must not be blank"),
                bad("a name of 129 characters", aJob().set("name", "x".repeat(129)).build(), CLUSTER,
                        "name", "at most 128 characters"),
                bad("missing tasks", aJob().without("tasks").build(), CLUSTER, "tasks", "is required"),
                bad("tasks that are not an array", aJob().set("tasks", "worker").build(), CLUSTER,
                        "tasks", "must be an array"),
                bad("no task groups", aJob().noTasks().build(), CLUSTER, "tasks", "at least one task group"),
                bad("65 task groups", manyTasks(65), CLUSTER, "tasks", "at most 64 task groups"),
                bad("a task that is not an object", aJob().noTasks().rawTask("worker").build(), CLUSTER,
                        "tasks[0]", "must be an object"),
                bad("an unknown top-level field", aJob().set("colour", "red").build(), CLUSTER,
                        "colour", "unknown field"),
                bad("a queue name with upper case", aJob().set("queue", "Research").build(), CLUSTER,
                        "queue", "lower-case name"),
                bad("a priority class that is a number", aJob().set("priorityClass", 5).build(), CLUSTER,
                        "priorityClass", "lower-case name"),
                bad("an unknown placement policy", aJob().set("placementPolicy", "random").build(), CLUSTER,
                        "placementPolicy", "must be one of [binpack, spread]"),
                bad("a placement policy that is not a string", aJob().set("placementPolicy", 1).build(), CLUSTER,
                        "placementPolicy", "must be one of"),
                bad("a topology given as a string", aJob().set("topology", "rack").build(), CLUSTER,
                        "topology", "must be an object"),
                bad("an unknown topology level", aJob().set("topology", Map.of("required", "row")).build(), CLUSTER,
                        "topology.required", "must be one of"),
                bad("an unknown topology field", aJob().set("topology", Map.of("within", "RACK")).build(), CLUSTER,
                        "topology.within", "unknown field"),
                bad("a preferred level looser than the required one",
                        aJob().set("topology", Map.of("required", "RACK", "preferred", "SPINE")).build(), CLUSTER,
                        "topology.preferred", "at least as tight as required"),
                bad("an unknown model among the accepted ones",
                        aJob().noTasks().task(aTask("w").gpus(1).set("gpuModels", List.of("H100", "TPU"))).build(),
                        CLUSTER, "tasks[0].gpuModels[1]", "unknown GPU model 'TPU'"),
                bad("an empty list of accepted models",
                        aJob().noTasks().task(aTask("w").gpus(1).set("gpuModels", List.of())).build(),
                        CLUSTER, "tasks[0].gpuModels", "non-empty array"),
                bad("a model listed twice", aJob().noTasks().task(aTask("w").gpus(1)
                        .set("gpuModels", List.of("A100", "A100"))).build(), CLUSTER, "tasks[0].gpuModels[1]",
                        "duplicate GPU model"),
                bad("both a model and a tier", aJob().noTasks().task(aTask("w").gpus(1).model("H100")
                        .set("gpuTier", "training")).build(), CLUSTER, "tasks[0].gpuModel", "at most one of"),
                bad("more GPUs than any node of the accepted models has",
                        aJob().noTasks().task(aTask("w").gpus(6).set("gpuModels", List.of("A100"))).build(),
                        CLUSTER, "tasks[0].gpus", "no registered node has more than 4 GPUs of [A100]"),
                bad("an unknown task field", aJob().noTasks().task(aTask("w").set("colour", "red")).build(),
                        CLUSTER, "tasks[0].colour", "unknown field"),
                bad("a task without a name", aJob().noTasks().task(aTask("w").without("name")).build(), CLUSTER,
                        "tasks[0].name", "is required"),
                bad("a task without a command", aJob().noTasks().task(aTask("w").without("command")).build(),
                        CLUSTER, "tasks[0].command", "is required"),
                bad("a command given as one string", aJob().noTasks().task(aTask("w").set("command", "python"))
                        .build(), CLUSTER, "tasks[0].command", "must be an array of strings"),
                bad("an empty command", aJob().noTasks().task(aTask("w").set("command", List.of())).build(),
                        CLUSTER, "tasks[0].command", "must not be empty"),
                bad("a blank command entry", aJob().noTasks().task(aTask("w").set("command", List.of("python", " ")))
                        .build(), CLUSTER, "tasks[0].command[1]", "must not be blank"),
                bad("a command entry that is a number", aJob().noTasks()
                        .task(aTask("w").set("command", List.of(1, "x"))).build(), CLUSTER,
                        "tasks[0].command[0]", "must be a string"),
                bad("two task groups with the same name", aJob().noTasks().task(aTask("w")).task(aTask("w")).build(),
                        CLUSTER, "tasks[1].name", "duplicate task name 'w' (also tasks[0])"),
                bad("zero replicas", aJob().noTasks().task(aTask("w").set("replicas", 0)).build(), CLUSTER,
                        "tasks[0].replicas", "must be between 1 and 1024"),
                bad("1025 replicas", aJob().noTasks().task(aTask("w").set("replicas", 1025)).build(), CLUSTER,
                        "tasks[0].replicas", "must be between 1 and 1024"),
                bad("a fractional replica count", aJob().noTasks().task(aTask("w").set("replicas", 1.5)).build(),
                        CLUSTER, "tasks[0].replicas", "must be an integer"),
                bad("replicas given as a string", aJob().noTasks().task(aTask("w").set("replicas", "2")).build(),
                        CLUSTER, "tasks[0].replicas", "must be an integer"),
                bad("a huge replica count", aJob().noTasks().task(aTask("w")
                                .set("replicas", new java.math.BigInteger("99999999999999999999999"))).build(),
                        CLUSTER, "tasks[0].replicas", "must be between 1 and 1024"),
                bad("negative GPUs", aJob().noTasks().task(aTask("w").gpus(-1)).build(), CLUSTER,
                        "tasks[0].gpus", "must be between 0 and 1024"),
                bad("more GPUs than any node has", aJob().noTasks().task(aTask("w").gpus(9)).build(), CLUSTER,
                        "tasks[0].gpus", "no registered node has more than 8 GPUs"),
                bad("GPUs while no node is registered", aJob().noTasks().task(aTask("w").gpus(1)).build(), EMPTY,
                        "tasks[0].gpus", "the cluster has no registered nodes"),
                bad("more GPUs of a model than any node has of it", aJob().noTasks()
                        .task(aTask("w").gpus(5).model("A100")).build(), CLUSTER,
                        "tasks[0].gpus", "no registered node has more than 4 A100 GPUs"),
                bad("an unknown GPU model", aJob().noTasks().task(aTask("w").gpus(1).model("B200")).build(), CLUSTER,
                        "tasks[0].gpuModel", "unknown GPU model 'B200'; known models: A100, H100"),
                bad("a GPU model while no node is registered", aJob().noTasks().task(aTask("w").model("H100"))
                        .build(), EMPTY, "tasks[0].gpuModel", "no GPU models are registered"),
                bad("a GPU model that is not a string", aJob().noTasks().task(aTask("w").set("gpuModel", 3))
                        .build(), CLUSTER, "tasks[0].gpuModel", "must be a string"),
                bad("zero CPUs", aJob().noTasks().task(aTask("w").set("cpus", 0)).build(), CLUSTER,
                        "tasks[0].cpus", "must be > 0"),
                bad("negative CPUs", aJob().noTasks().task(aTask("w").set("cpus", -0.5)).build(), CLUSTER,
                        "tasks[0].cpus", "must be > 0"),
                bad("CPUs finer than a millicore", aJob().noTasks().task(aTask("w").set("cpus", 0.0005)).build(),
                        CLUSTER, "tasks[0].cpus", "whole number of millicores"),
                bad("CPUs given as a string", aJob().noTasks().task(aTask("w").set("cpus", "8")).build(), CLUSTER,
                        "tasks[0].cpus", "must be a number"),
                bad("zero memory", aJob().noTasks().task(aTask("w").set("memoryMiB", 0)).build(), CLUSTER,
                        "tasks[0].memoryMiB", "must be between 1 and"),
                bad("zero run seconds", aJob().noTasks().task(aTask("w").set("runSeconds", 0)).build(), CLUSTER,
                        "tasks[0].runSeconds", "must be between 1 and"),
                bad("priority 1001", aJob().set("priority", 1001).build(), CLUSTER,
                        "priority", "must be between -1000 and 1000"),
                bad("priority -1001", aJob().set("priority", -1001).build(), CLUSTER,
                        "priority", "must be between -1000 and 1000"),
                bad("a boolean priority", aJob().set("priority", true).build(), CLUSTER,
                        "priority", "must be an integer"),
                bad("a zero time limit", aJob().set("timeLimitSeconds", 0).build(), CLUSTER,
                        "timeLimitSeconds", "must be between 1 and"),
                bad("a required field sent as null", aJob().set("name", null).build(), CLUSTER,
                        "name", "is required"),
                bad("a GPU fraction of 1000", aJob().noTasks().task(aTask("w").set("gpuMilli", 1000)).build(),
                        CLUSTER, "tasks[0].gpuMilli", "must be 1-999 (thousandths of one GPU) and needs gpus = 0"),
                bad("a GPU fraction of 0", aJob().noTasks().task(aTask("w").set("gpuMilli", 0)).build(),
                        CLUSTER, "tasks[0].gpuMilli", "must be 1-999"),
                bad("a GPU fraction with whole GPUs", aJob().noTasks().task(aTask("w").gpus(1).set("gpuMilli", 500))
                        .build(), CLUSTER, "tasks[0].gpuMilli", "needs gpus = 0, not 1"),
                bad("GPU memory without a fraction", aJob().noTasks().task(aTask("w").set("gpuMemoryMiB", 4096))
                        .build(), CLUSTER, "tasks[0].gpuMemoryMiB", "needs gpuMilli"),
                bad("a zero GPU memory", aJob().noTasks().task(aTask("w").set("gpuMilli", 500).set("gpuMemoryMiB", 0))
                        .build(), CLUSTER, "tasks[0].gpuMemoryMiB", "must be between 1 and"),
                bad("a MIG profile that is not one", aJob().noTasks().task(aTask("w").set("migProfile", "half"))
                        .build(), CLUSTER, "tasks[0].migProfile", "must be a MIG profile such as 1g.10gb"),
                bad("a MIG profile with whole GPUs", aJob().noTasks().task(aTask("w").gpus(2)
                        .set("migProfile", "1g.10gb")).build(), CLUSTER, "tasks[0].migProfile", "needs gpus = 0"),
                bad("a MIG profile and a fraction", aJob().noTasks().task(aTask("w").set("migProfile", "1g.10gb")
                        .set("gpuMilli", 100)).build(), CLUSTER, "tasks[0].migProfile",
                        "give gpuMilli or migProfile, not both"),
                bad("a fraction before any node registered", aJob().noTasks().task(aTask("w").set("gpuMilli", 100))
                        .build(), EMPTY, "tasks[0].gpuMilli", "no registered nodes yet"),
                // text that cannot be stored or shown faithfully
                bad("a NUL character in the name", aJob().set("name", "a\u0000b").build(), CLUSTER,
                        "name", "control character U+0000"),
                bad("a line break in the name", aJob().set("name", "a\nb").build(), CLUSTER,
                        "name", "control character U+000A"),
                bad("an unpaired surrogate in the name", aJob().set("name", "a\uD800b").build(), CLUSTER,
                        "name", "unpaired surrogate"),
                bad("a name of zero-width spaces only", aJob().set("name", "\u200B\u200B").build(), CLUSTER,
                        "name", "must not be blank"),
                bad("a name of Hangul fillers only", aJob().set("name", "\u3164").build(), CLUSTER,
                        "name", "must not be blank"),
                bad("a right-to-left override in the name", aJob().set("name", "job\u202Etxt.exe").build(), CLUSTER,
                        "name", "invisible formatting character U+202E"),
                bad("a NUL character in a task name", aJob().noTasks().task(aTask("w\u0000")).build(), CLUSTER,
                        "tasks[0].name", "control character U+0000"),
                bad("a NUL character in a command argument", aJob().noTasks()
                        .task(aTask("w").set("command", List.of("python", "-c", "x\u0000"))).build(), CLUSTER,
                        "tasks[0].command[2]", "NUL"),
                bad("an unpaired surrogate in a command argument", aJob().noTasks()
                        .task(aTask("w").set("command", List.of("python", "\uDC00"))).build(), CLUSTER,
                        "tasks[0].command[1]", "unpaired surrogate"),
                bad("a NUL character in a queue name", aJob().set("queue", "a\u0000").build(), CLUSTER,
                        "queue", "lower-case name"),
                // numbers every service can add and multiply without overflow
                bad("the largest long as a time limit", aJob().set("timeLimitSeconds", Long.MAX_VALUE).build(),
                        CLUSTER, "timeLimitSeconds", "must be between 1 and 31622400"),
                bad("1e17 seconds as a time limit", aJob().set("timeLimitSeconds", 1e17).build(),
                        CLUSTER, "timeLimitSeconds", "must be between 1 and 31622400"),
                bad("a time limit of a year and a day", aJob().set("timeLimitSeconds", 31_622_401).build(),
                        CLUSTER, "timeLimitSeconds", "must be between 1 and 31622400"),
                bad("a run time longer than a year", aJob().noTasks().task(aTask("w").set("runSeconds", Long.MAX_VALUE))
                        .build(), CLUSTER, "tasks[0].runSeconds", "must be between 1 and 31622400"),
                bad("more memory than 16 TiB", aJob().noTasks().task(aTask("w").set("memoryMiB", 16_777_217))
                        .build(), CLUSTER, "tasks[0].memoryMiB", "must be between 1 and 16777216"),
                bad("more GPU memory than 16 TiB", aJob().noTasks().task(aTask("w").set("gpuMilli", 500)
                        .set("gpuMemoryMiB", Long.MAX_VALUE)).build(), CLUSTER, "tasks[0].gpuMemoryMiB",
                        "must be between 1 and 16777216"),
                bad("more than 1024 GPUs in one task", aJob().noTasks().task(aTask("w").gpus(Integer.MAX_VALUE))
                        .build(), CLUSTER, "tasks[0].gpus", "must be between 0 and 1024"),
                // bigger than everything the cluster has
                bad("a gang of more GPUs than the whole cluster has", aJob().noTasks()
                        .task(aTask("w").set("replicas", 5).gpus(4)).build(), CLUSTER, "tasks",
                        "asks for 20 GPUs at once, more than the 12 GPUs of the whole cluster"),
                bad("more GPUs of one model than the cluster has of it", aJob().noTasks()
                        .task(aTask("w").set("replicas", 2).gpus(4).model("A100")).build(), CLUSTER, "tasks",
                        "asks for 8 GPUs at once, more than the 4 A100 GPUs of the whole cluster"));
    }

    @Test
    void carriesTheCheckpointDirectoryAndIntervalIntoTheSpecAndShowsThemBack() {
        Object tree = aJob().set("checkpoint", Map.of("dir", "/ckpt/resnet", "intervalSeconds", 1800)).build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().checkpoint()).isEqualTo(new JobSpec.Checkpoint("/ckpt/resnet", 1800L));
        assertThat(validator.validate(JobSpecTree.toTree(v.spec()), CLUSTER).spec()).isEqualTo(v.spec());
    }

    static Stream<Arguments> badCheckpoints() {
        return Stream.of(
                arguments("a checkpoint given as a string", "/ckpt", "checkpoint", "must be an object"),
                arguments("no directory", Map.of("intervalSeconds", 60), "checkpoint.dir", "is required"),
                arguments("a relative directory", Map.of("dir", "ckpt"), "checkpoint.dir", "absolute path"),
                arguments("a zero interval", Map.of("dir", "/ckpt", "intervalSeconds", 0),
                        "checkpoint.intervalSeconds", "between 1"),
                arguments("an unknown checkpoint field", Map.of("dir", "/ckpt", "keep", 3), "checkpoint.keep",
                        "unknown field"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("badCheckpoints")
    void refusesABadCheckpointDeclaration(String description, Object checkpoint, String field, String message) {
        Validated v = validator.validate(aJob().set("checkpoint", checkpoint).build(), CLUSTER);

        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    /** Tiers [training: H100, A100]; classes [high, normal]; queues research and vision-batch of vision. */
    private static final SchedulingCatalog CATALOG = new SchedulingCatalog(
            Map.of("vision", "vision", "vision-batch", "vision", "nlp", "nlp"), Set.of("high", "normal"),
            Map.of("training", List.of("H100", "A100")));

    static Stream<Arguments> refusedByTheConfiguration() {
        return Stream.of(
                arguments("an unknown GPU tier", aJob().noTasks().task(aTask("w").gpus(1).set("gpuTier", "nope"))
                        .build(), CATALOG, "tasks[0].gpuTier", "unknown GPU tier 'nope'; tiers: training"),
                arguments("an unknown priority class", aJob().set("priorityClass", "gold").build(), CATALOG,
                        "priorityClass", "unknown priority class 'gold'; classes: high, normal"),
                arguments("a queue of another tenant", aJob().set("queue", "nlp").build(), CATALOG,
                        "queue", "tenant vision has no queue 'nlp'; its queues: vision, vision-batch"),
                arguments("a queue nobody has", aJob().set("queue", "ghost").build(), CATALOG,
                        "queue", "tenant vision has no queue 'ghost'"),
                arguments("no queue given and none named after the tenant",
                        aJob().build(), new SchedulingCatalog(Map.of("vision-batch", "vision"), null, null), "queue",
                        "tenant vision has no default queue 'vision'; name one of its queues: vision-batch"),
                arguments("a tenant without any queue", aJob().build(),
                        new SchedulingCatalog(Map.of("nlp", "nlp"), null, null), "queue",
                        "tenant vision has no queue in the current configuration"),
                arguments("a pool placement does not have", aJob().set("pool", "tpu").build(),
                        CATALOG.withPools(Set.of("default", "k8s")), "pool",
                        "unknown pool 'tpu'; pools: default, k8s"),
                arguments("a pool when placement published a configuration written before pools",
                        aJob().set("pool", "k8s").build(), CATALOG.withPools(Set.of()), "pool",
                        "unknown pool 'k8s'; pools: default"),
                arguments("a queue other than its own where every tenant has one queue named after it",
                        aJob().set("queue", "shared").build(), SchedulingCatalog.implicitQueues(), "queue",
                        "tenant vision has no queue 'shared'; its queues: vision"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refusedByTheConfiguration")
    void refusesWhatTheConfigurationDoesNotHave(String description, Object tree, SchedulingCatalog catalog,
                                                String field, String message) {
        Validated v = validator.validate(tree, CLUSTER, catalog, "vision");

        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    @Test
    void acceptsWhatTheConfigurationHasAndEverythingWhileItIsNotKnownYet() {
        Object tree = aJob().set("queue", "vision-batch").set("priorityClass", "high").noTasks()
                .task(aTask("w").gpus(2).set("gpuTier", "training")).build();
        Object anything = aJob().set("queue", "ghost").set("priorityClass", "gold").noTasks()
                .task(aTask("w").gpus(2).set("gpuTier", "nope")).build();

        assertThat(validator.validate(tree, CLUSTER, CATALOG, "vision").errors()).isEmpty();
        assertThat(validator.validate(aJob().build(), CLUSTER, CATALOG, "vision").errors()).isEmpty();
        assertThat(validator.validate(aJob().build(), CLUSTER, SchedulingCatalog.implicitQueues(), "vision").errors())
                .isEmpty();
        assertThat(validator.validate(anything, CLUSTER, SchedulingCatalog.unknown(), "vision").errors()).isEmpty();
    }

    @Test
    void aJobNamingAPoolPlacementHasKeepsItAndShowsItInTheJobView() {
        Validated v = validator.validate(aJob().set("pool", "k8s").build(), CLUSTER,
                CATALOG.withPools(Set.of("default", "k8s")), "vision");
        Validated unknownYet = validator.validate(aJob().set("pool", "slurm").build(), CLUSTER, CATALOG, "vision");

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().pool()).isEqualTo("k8s");
        assertThat(JobSpecTree.toTree(v.spec())).containsEntry("pool", "k8s");
        assertThat(unknownYet.errors()).as("pools not published yet: placement decides").isEmpty();
        assertThat(validator.validate(aJob().build(), CLUSTER, CATALOG, "vision").spec().pool()).isNull();
    }

    @Test
    void acceptsNamesInAnyScriptWithEmojiAndTabsInCommands() {
        Object tree = aJob().set("name", "学習 🧑‍🔬 résumé").noTasks()
                .task(aTask("w").set("command", List.of("python", "-c", "print(1)\n\tprint(2)"))).build();

        assertThat(validator.validate(tree, CLUSTER).errors()).isEmpty();
    }

    @Test
    void acceptsTheLargestBoundsExactly() {
        Object tree = aJob().set("timeLimitSeconds", 31_622_400).noTasks().task(aTask("w").gpus(8)
                .set("runSeconds", 31_622_400).set("memoryMiB", 16_777_216)).build();

        assertThat(validator.validate(tree, CLUSTER).errors()).isEmpty();
    }

    @ParameterizedTest(name = "rejects {0}")
    @MethodSource("rejected")
    void rejectsABadSpecNamingTheField(String description, Object tree, ClusterLimits limits, String field,
                                       String message) {
        Validated v = validator.validate(tree, limits);

        assertThat(v.isValid()).isFalse();
        assertThat(v.spec()).isNull();
        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    @Test
    void reportsEveryBadFieldInOneAnswer() {
        Object tree = aJob().set("name", "").set("priority", 5000).set("extra", 1).noTasks()
                .task(aTask("a").gpus(99).set("cpus", 0).set("command", List.of("")))
                .task(aTask("a").set("replicas", 0).set("memoryMiB", -1))
                .build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).extracting(FieldError::field).containsExactlyInAnyOrder(
                "extra", "name", "priority", "tasks[0].command[0]", "tasks[0].gpus", "tasks[0].cpus",
                "tasks[1].replicas", "tasks[1].memoryMiB", "tasks[1].name");
    }

    @Test
    void fillsInDefaultsForEverythingOptional() {
        Validated v = validator.validate(aJob().build(), EMPTY);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec()).isEqualTo(new JobSpec("train-resnet", 0, null, List.of(
                new TaskSpec("worker", 1, List.of("python", "train.py"), 0, null, 1000, 1024, null))));
    }

    @Test
    void acceptsTheDocumentedExampleOnAClusterThatFitsIt() {
        Object tree = aJob().set("priority", 10).set("timeLimitSeconds", 3600).noTasks()
                .task(aTask("worker").set("replicas", 2).gpus(4).model("H100").set("cpus", 8)
                        .set("memoryMiB", 65536).set("runSeconds", 120))
                .build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec()).isEqualTo(new JobSpec("train-resnet", 10, 3600L, List.of(
                new TaskSpec("worker", 2, List.of("python", "train.py"), 4, "H100", 8000, 65536, 120L))));
    }

    @Test
    void carriesQueuePriorityClassTopologyAndModelPreferencesIntoTheSpec() {
        Object tree = aJob().set("queue", "research").set("priorityClass", "high")
                .set("topology", Map.of("required", "spine", "preferred", "RACK")).noTasks()
                .task(aTask("a").gpus(8).set("gpuModels", List.of("H100", "A100")))
                .task(aTask("b").gpus(1).set("gpuTier", "inference"))
                .build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().queue()).isEqualTo("research");
        assertThat(v.spec().priorityClass()).isEqualTo("high");
        assertThat(v.spec().topology()).isEqualTo(new JobSpec.Topology("SPINE", "RACK"));
        assertThat(v.spec().tasks().get(0).gpuModels()).containsExactly("H100", "A100");
        assertThat(v.spec().tasks().get(1).gpuTier()).isEqualTo("inference");
    }

    @Test
    void carriesThePlacementPolicyLowerCasedAndLeavesItNullWhenNotGiven() {
        Validated spread = validator.validate(aJob().set("placementPolicy", "Spread").build(), CLUSTER);
        Validated none = validator.validate(aJob().build(), CLUSTER);

        assertThat(spread.errors()).isEmpty();
        assertThat(spread.spec().placementPolicy()).isEqualTo("spread");
        assertThat(JobSpecTree.toTree(spread.spec())).containsEntry("placementPolicy", "spread");
        assertThat(validator.validate(JobSpecTree.toTree(spread.spec()), CLUSTER).spec()).isEqualTo(spread.spec());
        assertThat(none.spec().placementPolicy()).isNull();
    }

    @Test
    void carriesGpuFractionsAndMigProfilesIntoTheSpec() {
        Object tree = aJob().noTasks()
                .task(aTask("half").set("gpuMilli", 500).set("gpuMemoryMiB", 20480).model("H100"))
                .task(aTask("quarter").set("gpuMilli", 250))
                .task(aTask("mig").set("migProfile", "3g.40gb"))
                .build();

        Validated v = validator.validate(tree, CLUSTER);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().tasks()).extracting(TaskSpec::gpus).containsOnly(0);
        assertThat(v.spec().tasks()).extracting(TaskSpec::gpuMilli).containsExactly(500, 250, null);
        assertThat(v.spec().tasks()).extracting(TaskSpec::gpuMemoryMiB).containsExactly(20480L, null, null);
        assertThat(v.spec().tasks()).extracting(TaskSpec::migProfile).containsExactly(null, null, "3g.40gb");
        assertThat(validator.validate(JobSpecTree.toTree(v.spec()), CLUSTER).spec()).as("shown back, it validates the same")
                .isEqualTo(v.spec());
    }

    @Test
    void aRequiredTopologyAloneIsAlsoThePreferredOne() {
        Object tree = aJob().set("topology", Map.of("required", "NODE")).build();

        assertThat(validator.validate(tree, CLUSTER).spec().topology()).isEqualTo(new JobSpec.Topology("NODE", "NODE"));
    }

    @Test
    void theSpecShownBackValidatesToTheSameSpec() {
        Object tree = aJob().set("queue", "research").set("topology", Map.of("required", "RACK")).noTasks()
                .task(aTask("a").gpus(2).set("gpuModels", List.of("A100", "H100"))).build();
        JobSpec spec = validator.validate(tree, CLUSTER).spec();

        assertThat(validator.validate(JobSpecTree.toTree(spec), CLUSTER).spec()).isEqualTo(spec);
    }

    @Test
    void mapsFractionalCoresToMillicores() {
        Object tree = aJob().noTasks()
                .task(aTask("a").set("cpus", 0.5))
                .task(aTask("b").set("cpus", new BigDecimal("2.125")))
                .build();

        assertThat(validator.validate(tree, EMPTY).spec().tasks()).extracting(TaskSpec::cpuMillis)
                .containsExactly(500, 2125);
    }

    @Test
    void acceptsIntegersWrittenWithATrailingZeroFraction() {
        Object tree = aJob().noTasks().task(aTask("a").set("gpus", 2.0).set("replicas", 3.0)).build();

        TaskSpec task = validator.validate(tree, CLUSTER).spec().tasks().get(0);

        assertThat(task.gpus()).isEqualTo(2);
        assertThat(task.replicas()).isEqualTo(3);
    }

    @Test
    void treatsAnExplicitNullOptionalFieldAsNotGiven() {
        Object tree = aJob().set("priority", null).set("timeLimitSeconds", null).noTasks()
                .task(aTask("a").set("gpuModel", null).set("runSeconds", null).set("cpus", null))
                .build();

        Validated v = validator.validate(tree, EMPTY);

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().priority()).isZero();
        assertThat(v.spec().tasks().get(0).cpuMillis()).isEqualTo(1000);
    }

    @Test
    void acceptsExactlyAsManyGpusOfAModelAsTheBiggestNodeHas() {
        Object tree = aJob().noTasks().task(aTask("a").gpus(4).model("A100")).build();

        assertThat(validator.validate(tree, CLUSTER).errors()).isEmpty();
    }

    @Test
    void refusesCpuOrMemoryNoNodeHasOnOneNumaSocketAndAcceptsExactlyTheLargest() {
        NodeCatalog catalog = new NodeCatalog();
        catalog.register("big", SpecTrees.gpus(8, "H100"), 48_000, 524_288, 96_000, 1_048_576);
        catalog.register("small", SpecTrees.gpus(4, "A100"), 16_000, 131_072, 32_000, 262_144);
        ClusterLimits limits = catalog.limits();

        Object tooMuch = aJob().noTasks().task(aTask("a").gpus(8).set("cpus", 64).set("memoryMiB", 600_000)).build();
        assertThat(validator.validate(tooMuch, limits).errors()).extracting(FieldError::field, FieldError::message)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("tasks[0].cpus", "no registered node has more than 48"
                                + " CPUs on one NUMA socket (a task's CPUs are on its GPUs' socket), so 64 per task"
                                + " can never be placed"),
                        org.assertj.core.groups.Tuple.tuple("tasks[0].memoryMiB", "no registered node has more than"
                                + " 524288 MiB of memory on one NUMA socket (or in all, where memory is not per"
                                + " socket), so 600000 per task can never be placed"));
        Object largest = aJob().noTasks().task(aTask("a").gpus(8).set("cpus", 48).set("memoryMiB", 524_288)).build();
        assertThat(validator.validate(largest, limits).errors()).isEmpty();
        assertThat(validator.validate(aJob().noTasks().task(aTask("a").gpus(1).set("cpus", 0.5)).build(), limits)
                .errors()).isEmpty();
        assertThat(validator.validate(tooMuch, CLUSTER).errors()).as("CPU and memory of the nodes not known").isEmpty();
    }

    @Test
    void refusesAMigProfileNoRegisteredGpuOfTheAcceptedModelsOffersUnlessARegistrationDidNotSay() {
        NodeCatalog catalog = new NodeCatalog();
        // an A100 40 GB shape and an H100 without MIG
        catalog.register("a100", SpecTrees.gpus(4, "A100"), 0, 0, 0, 0, Map.of("A100", List.of("1g.5gb", "1g.10gb",
                "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")));
        catalog.register("h100", SpecTrees.gpus(8, "H100"), 0, 0, 0, 0, Map.of("H100", List.of()));
        ClusterLimits limits = catalog.limits();

        Object tooBig = aJob().noTasks().task(aTask("m").gpus(0).model("A100").set("migProfile", "3g.40gb")).build();
        assertThat(validator.validate(tooBig, limits).errors()).extracting(FieldError::field, FieldError::message)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("tasks[0].migProfile", "no registered "
                        + "MIG-capable GPU of model A100 offers 3g.40gb (offered: 1g.10gb, 1g.5gb, 2g.10gb, 3g.20gb, "
                        + "4g.20gb, 7g.40gb)"));
        Object onH100 = aJob().noTasks().task(aTask("m").gpus(0).model("H100").set("migProfile", "1g.10gb")).build();
        assertThat(validator.validate(onH100, limits).errors()).extracting(FieldError::message)
                .containsExactly("no registered MIG-capable GPU of model H100 offers 1g.10gb (none offers any MIG "
                        + "profile)");
        Object anyModel = aJob().noTasks().task(aTask("m").gpus(0).set("migProfile", "3g.20gb")).build();
        assertThat(validator.validate(anyModel, limits).errors()).isEmpty();

        catalog.register("old", SpecTrees.gpus(8, "A100"), 0, 0, 0, 0);
        assertThat(validator.validate(tooBig, catalog.limits()).errors()).as("an older placement did not say")
                .isEmpty();
    }

    @Test
    void refusesAGangOfMoreCpuOrMemoryThanTheWholeClusterHasEvenWithoutGpus() {
        NodeCatalog catalog = new NodeCatalog();
        catalog.register("a", List.of(), 2_000, 4_096, 2_000, 4_096);
        catalog.register("b", List.of(), 2_000, 4_096, 2_000, 4_096);
        ClusterLimits limits = catalog.limits();

        Object tooMany = aJob().noTasks().task(aTask("prep").gpus(0).set("replicas", 5).set("cpus", 1)
                .set("memoryMiB", 2_048)).build();
        assertThat(validator.validate(tooMany, limits).errors()).extracting(FieldError::field, FieldError::message)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("tasks", "the job asks for 5 CPUs at once, more"
                        + " than the 4 CPUs of the whole cluster, so it could never be placed"),
                        org.assertj.core.groups.Tuple.tuple("tasks", "the job asks for 10240 MiB of memory at once, more"
                                + " than the 8192 MiB of the whole cluster, so it could never be placed"));
        Object fits = aJob().noTasks().task(aTask("prep").gpus(0).set("replicas", 4).set("cpus", 1)
                .set("memoryMiB", 2_048)).build();
        assertThat(validator.validate(fits, limits).errors()).isEmpty();
        catalog.register("c", List.of(), 0, 0, 0, 0);
        assertThat(validator.validate(tooMany, catalog.limits()).errors()).as("a node of unknown size").isEmpty();
    }

    @Test
    void aGpuJobBeforeAnyNodeRegistersOnlyWaitsForNodesUnlessSomethingElseIsWrongToo() {
        Validated early = validator.validate(aJob().noTasks().task(aTask("a").gpus(2)).task(aTask("b").gpus(1))
                .build(), EMPTY);
        assertThat(early.waitsForNodes()).isTrue();
        assertThat(early.errors()).extracting(FieldError::message).containsOnly(JobSpecValidator.NO_NODES_YET);

        Validated wrong = validator.validate(aJob().noTasks().task(aTask("a").gpus(2).set("replicas", 0)).build(),
                EMPTY);
        assertThat(wrong.waitsForNodes()).as("a bad field is the request's fault: 400").isFalse();
        assertThat(validator.validate(aJob().build(), CLUSTER).waitsForNodes()).isFalse();
    }

    @Test
    void acceptsCpuOnlyTasksBeforeAnyNodeRegisters() {
        Object tree = aJob().noTasks().task(aTask("a").gpus(0)).build();

        assertThat(validator.validate(tree, EMPTY).errors()).isEmpty();
    }

    @Test
    void acceptsSixtyFourTaskGroupsButNotSixtyFive() {
        assertThat(validator.validate(manyTasks(64), EMPTY).errors()).isEmpty();
        assertThat(validator.validate(manyTasks(65), EMPTY).errors()).extracting(FieldError::field)
                .containsExactly("tasks");
    }

    private static Map<String, Object> manyTasks(int n) {
        SpecTrees.JobTree job = aJob().noTasks();
        for (int i = 0; i < n; i++) {
            job.task(aTask("t" + i));
        }
        return job.build();
    }

    private static Arguments bad(String description, Object tree, ClusterLimits limits, String field,
                                 String message) {
        return arguments(description, tree, limits, field, message);
    }
}
