package io.gantry.cli.jobfile;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class JobFileTest {
    static final String GOOD = """
            name: fine-tune
            priority: 10
            timeLimitSeconds: 7200
            queue: research
            checkpoint:
              dir: /ckpt/llama
              intervalSeconds: 1800
            tasks:
              - name: trainer
                replicas: 2
                command: [torchrun, --nproc-per-node=8, train.py]
                gpus: 8
                gpuModel: H100
                cpus: 0.5
                memoryMiB: 65536
            """;

    @Test
    void aValidFileBecomesExactlyTheApiBody() throws Exception {
        JobFile file = JobFile.parse("job.yaml", GOOD);
        Map<String, Object> body = file.body();
        assertThat(body).containsEntry("name", "fine-tune").containsEntry("priority", 10L)
                .containsEntry("timeLimitSeconds", 7200L).containsEntry("queue", "research");
        assertThat(body.get("checkpoint")).isEqualTo(Map.of("dir", "/ckpt/llama", "intervalSeconds", 1800L));
        @SuppressWarnings("unchecked")
        Map<String, Object> task = ((List<Map<String, Object>>) body.get("tasks")).get(0);
        assertThat(task).containsEntry("command", List.of("torchrun", "--nproc-per-node=8", "train.py"))
                .containsEntry("cpus", new BigDecimal("0.5")).containsEntry("gpus", 8L);
    }

    @Test
    void aPoolNamedInTheFileGoesIntoTheApiBody() throws Exception {
        JobFile file = JobFile.parse("job.yaml", "name: a\npool: gpu\ntasks:\n  - name: w\n    command: [x]\n");
        assertThat(file.body()).containsEntry("pool", "gpu");
    }

    @Test
    void environmentWorkingDirectoryImageMountsAndASuccessPolicyGoIntoTheApiBodyAsWritten() throws Exception {
        JobFile file = JobFile.parse("job.yaml", """
                name: mpi
                successPolicy:
                  leader: launcher
                tasks:
                  - name: launcher
                    command: [mpirun, lmp]
                    image: nvcr.io/nvidia/pytorch:24.05-py3
                    workingDir: /workspace
                    env:
                      OMP_NUM_THREADS: "4"
                      EMPTY: ""
                    mounts:
                      - mountPath: /data
                        claim: datasets
                        readOnly: true
                  - name: worker
                    command: [sleep, infinity]
                retry: {maxRetries: 2, backoffSeconds: 30}
                dependencies:
                  - jobId: prep-1
                  - {jobId: probe-2, condition: afternotok}
                suspend: true
                interactive: false
                """);

        Map<String, Object> body = file.body();

        assertThat(body.get("successPolicy")).isEqualTo(Map.of("leader", "launcher"));
        assertThat(body.get("retry")).isEqualTo(Map.of("maxRetries", 2L, "backoffSeconds", 30L));
        assertThat(body.get("dependencies")).isEqualTo(List.of(Map.of("jobId", "prep-1"),
                Map.of("jobId", "probe-2", "condition", "afternotok")));
        assertThat(body.get("suspend")).isEqualTo(true);
        assertThat(body.get("interactive")).as("a batch job: never stopped for idling").isEqualTo(false);
        @SuppressWarnings("unchecked")
        Map<String, Object> launcher = ((List<Map<String, Object>>) body.get("tasks")).get(0);
        assertThat(launcher).containsEntry("image", "nvcr.io/nvidia/pytorch:24.05-py3")
                .containsEntry("workingDir", "/workspace")
                .containsEntry("env", Map.of("OMP_NUM_THREADS", "4", "EMPTY", ""))
                .containsEntry("mounts", List.of(Map.of("mountPath", "/data", "claim", "datasets", "readOnly", true)));
        assertThat(file.lineOf("tasks[0].env.OMP_NUM_THREADS")).as("an API error on a variable points at it")
                .isEqualTo(10);
        assertThat(file.lineOf("tasks[0].mounts[0].claim")).isEqualTo(14);
        assertThat(file.lineOf("successPolicy.leader")).isEqualTo(3);
    }

    @Test
    void theApisFieldPathsPointAtTheLinesTheyWereWrittenOn() throws Exception {
        JobFile file = JobFile.parse("job.yaml", GOOD);
        assertThat(file.lineOf("name")).isEqualTo(1);
        assertThat(file.lineOf("checkpoint.dir")).isEqualTo(6);
        assertThat(file.lineOf("tasks[0]")).isEqualTo(9);
        assertThat(file.lineOf("tasks[0].gpus")).isEqualTo(12);
        assertThat(file.lineOf("tasks[0].command[2]")).isEqualTo(11);
        assertThat(file.lineOf("tasks[0].gpuTier")).as("a field the file lacks: its enclosing task").isEqualTo(9);
        assertThat(file.lineOf("topology.required")).as("nothing encloses it: the file").isZero();
        assertThat(file.locate("tasks[0].gpus", "no registered node has more than 4 GPUs"))
                .isEqualTo("job.yaml:12: tasks[0].gpus: no registered node has more than 4 GPUs");
        assertThat(file.locate("body", "must be a JSON object")).isEqualTo("job.yaml: must be a JSON object");
    }

    static Stream<Arguments> badFiles() {
        return Stream.of(
                bad("a misspelt field is named with the known one it resembles", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            gpu: 2
                        """, "job.yaml:5: tasks[0].gpu: unknown field; did you mean `gpus`?"),
                bad("another scheduler's name for dependencies points at Gantry's", """
                        name: x
                        dependsOn: [job-1]
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: dependsOn: unknown field; did you mean `dependencies`?"),
                bad("a dependency given as a bare id asks for a mapping", """
                        name: x
                        dependencies: [job-1]
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: dependencies[0]: must be a mapping (jobId, condition: afterok | afterany | "
                        + "afternotok), not text"),
                bad("suspend must be a boolean", """
                        name: x
                        suspend: "yes"
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: suspend: must be true or false, not \"yes\""),
                bad("interactive must be a boolean", """
                        name: x
                        interactive: "no"
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: interactive: must be true or false, not \"no\""),
                bad("a retry policy's misspelt field is named", """
                        name: x
                        retry: {maxRetries: 2, limit: 3}
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: retry.limit: unknown field; known fields: maxRetries, backoffSeconds"),
                bad("Kubernetes' name for the retry budget points at Gantry's", """
                        name: x
                        backoffLimit: 3
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: backoffLimit: unknown field; did you mean `retry`?"),
                bad("another scheduler's name for a field is named with Gantry's", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            environment: {A: b}
                        """, "job.yaml:5: tasks[0].environment: unknown field; did you mean `env`?"),
                bad("a number as a variable's value asks for quotes", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            env:
                              OMP_NUM_THREADS: 4
                        """, "job.yaml:6: tasks[0].env.OMP_NUM_THREADS: must be text, not a number "
                        + "(quote it to keep it text)"),
                bad("variables given as a list ask for a mapping", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            env: [A=b]
                        """, "job.yaml:5: tasks[0].env: must be a mapping of variable names to text (FOO: bar), "
                        + "not a list"),
                bad("a mount without a path, or with both a host path and a claim", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            mounts:
                              - claim: datasets
                              - mountPath: /data
                                hostPath: /mnt/data
                                claim: datasets
                                readOnly: "yes"
                        """, "job.yaml:6: tasks[0].mounts[0].mountPath: is required",
                        "job.yaml:8: tasks[0].mounts[1].hostPath: give exactly one of hostPath and claim",
                        "job.yaml:10: tasks[0].mounts[1].readOnly: must be true or false, not \"yes\""),
                bad("a success policy without its leader", """
                        name: x
                        successPolicy: {}
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: successPolicy.leader: is required"),
                bad("a command written as one string asks for a list", """
                        name: x
                        tasks:
                          - name: w
                            command: python train.py
                        """, "job.yaml:4: tasks[0].command: must be a list of arguments, e.g. [python, train.py] "
                        + "(a shell line: [sh, -c, \"...\"])"),
                bad("GPUs out of range name the range", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            gpus: 2000
                        """, "job.yaml:5: tasks[0].gpus: must be a whole number from 0 to 1024, not 2000"),
                bad("a fractional replica count is refused", """
                        name: x
                        tasks:
                          - name: w
                            replicas: 1.5
                            command: [run]
                        """, "job.yaml:4: tasks[0].replicas: must be a whole number from 1 to 1024, not 1.5"),
                bad("missing name and tasks are reported for the file", """
                        priority: 1
                        """, "job.yaml: name: is required", "job.yaml: tasks: is required"),
                bad("a missing command points at its task", """
                        name: x
                        tasks:
                          - name: w
                            gpus: 1
                        """, "job.yaml:3: tasks[0].command: is required"),
                bad("a yes that YAML reads as true is not a name", """
                        name: yes
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:1: name: must be text, not true/false (quote it to keep it text)"),
                bad("a key given twice names both lines", """
                        name: x
                        name: y
                        tasks:
                          - name: w
                            command: [run]
                        """, "job.yaml:2: name: is given twice (first on line 1)"),
                bad("two task groups of one name are refused", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                          - name: w
                            command: [run]
                        """, "job.yaml:5: tasks[1].name: duplicate task name 'w' (also tasks[0])"),
                bad("broken YAML points at the line it broke on", """
                        name: x
                        tasks:
                          - name: w
                            command: [run
                        gpus: 1
                        """, "job.yaml:5: not valid YAML: expected ',' or ']', but got :"),
                bad("a second document is not a second job", """
                        name: x
                        tasks: [{name: w, command: [run]}]
                        ---
                        name: y
                        """, "job.yaml:3: not valid YAML: a job file holds one job (one YAML document, no second `---`)"),
                bad("a list instead of a job", """
                        - name: x
                        """, "job.yaml:1: must be a mapping of fields (name: ..., tasks: ...), not a list"),
                bad("an empty file", "\n", "job.yaml: is empty; a job file needs at least `name` and `tasks`"),
                bad("a checkpoint without its directory", """
                        name: x
                        checkpoint:
                          intervalSeconds: 60
                        tasks: [{name: w, command: [run]}]
                        """, "job.yaml:2: checkpoint.dir: is required"),
                bad("a non-positive CPU count", """
                        name: x
                        tasks:
                          - name: w
                            command: [run]
                            cpus: 0
                        """, "job.yaml:5: tasks[0].cpus: must be a number above 0 (cores; 0.5 = half a core), not 0"),
                bad("problems come back together in line order", """
                        name: ""
                        tasks:
                          - name: w
                            command: []
                            memoryMiB: 0
                        """, "job.yaml:1: name: must not be blank", "job.yaml:4: tasks[0].command: must not be empty",
                        "job.yaml:5: tasks[0].memoryMiB: must be a whole number from 1 to 16777216, not 0"));
    }

    private static Arguments bad(String name, String yaml, String... expected) {
        return Arguments.of(Named.of(name, yaml), List.of(expected));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFiles")
    void aBadFileIsRefusedNamingTheLineAndField(String yaml, List<String> expected) {
        JobFile.Invalid invalid = catchThrowableOfType(JobFile.Invalid.class, () -> JobFile.parse("job.yaml", yaml));
        assertThat(invalid).as("refused").isNotNull();
        assertThat(invalid.lines()).containsExactlyElementsOf(expected);
    }

    @Test
    void anAliasBombIsRefusedRatherThanExpanded() {
        StringBuilder yaml = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 0; i < 30; i++) {
            yaml.append("b").append(i).append(": &b").append(i).append(" [*a, *a, *a, *a, *a, *a, *a, *a]\n");
        }
        assertThatThrownBy(() -> JobFile.parse("bomb.yaml", yaml.toString())).isInstanceOf(JobFile.Invalid.class);
    }

    @Test
    void everyExampleJobFileIsValid() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of("..", "examples", "jobs");
        try (Stream<java.nio.file.Path> files = java.nio.file.Files.walk(dir)) {
            List<java.nio.file.Path> yamls = files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
            assertThat(yamls).hasSizeGreaterThanOrEqualTo(7);
            for (java.nio.file.Path p : yamls) {
                JobFile.parse(p.getFileName().toString(), java.nio.file.Files.readString(p));
            }
        }
    }
}
