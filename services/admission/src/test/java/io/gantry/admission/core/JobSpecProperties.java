package io.gantry.admission.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.List;
import java.util.stream.IntStream;

import static io.gantry.admission.core.SpecTrees.cluster;
import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;

/** What GET shows (and what an idempotent resubmission is compared by) is a spec the validator gives back intact. */
class JobSpecProperties {
    /** 64 nodes of 8 H100 and 64 of 4 A100: room for any generated gang (at most 64 tasks x 4 GPUs). */
    private static final ClusterLimits CLUSTER = cluster(java.util.stream.Stream.concat(
            java.util.Collections.nCopies(64, gpus(8, "H100")).stream(),
            java.util.Collections.nCopies(64, gpus(4, "A100")).stream()).toList());
    private final JobSpecValidator validator = new JobSpecValidator();

    @Property(tries = 300)
    void anAcceptedSpecRoundTripsThroughItsTree(@ForAll("specs") JobSpec spec) {
        Validated first = validator.validate(JobSpecTree.toTree(spec), CLUSTER);

        assertThat(first.errors()).isEmpty();
        assertThat(first.spec()).isEqualTo(spec);
        assertThat(JobSpecTree.toTree(first.spec())).isEqualTo(JobSpecTree.toTree(spec));
    }

    @Provide
    Arbitrary<JobSpec> specs() {
        Arbitrary<String> names = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(128);
        Arbitrary<Integer> priorities = Arbitraries.integers().between(-1000, 1000);
        Arbitrary<Long> limits = Arbitraries.longs().between(1, 1_000_000).injectNull(0.3);
        Arbitrary<List<TaskSpec>> tasks = Combinators.combine(task(), runtime()).as((t, r) -> t.withRuntime(r.env(), r.workingDir(),
                        r.image(), r.mounts()))
                .list().ofMinSize(1).ofMaxSize(64).map(ts -> IntStream
                .range(0, ts.size())
                .mapToObj(i -> new TaskSpec("task-" + i, ts.get(i).replicas(), ts.get(i).command(), ts.get(i).gpus(),
                        ts.get(i).gpuModel(), ts.get(i).cpuMillis(), ts.get(i).memoryMiB(), ts.get(i).runSeconds())
                        .withRuntime(ts.get(i).env(), ts.get(i).workingDir(), ts.get(i).image(), ts.get(i).mounts()))
                .toList());
        Arbitrary<Boolean> leader = Arbitraries.of(true, false);
        return Combinators.combine(names, priorities, limits, tasks, leader).as((n, p, l, ts, lead) -> new JobSpec(n,
                p, l, ts, null, null, null, null, null,
                lead ? new JobSpec.SuccessPolicy(ts.get(ts.size() - 1).name()) : null));
    }

    /** Environment, working directory, image and mounts of one task group (each often absent). */
    private Arbitrary<TaskSpec> runtime() {
        Arbitrary<java.util.Map<String, String>> env = Arbitraries.maps(
                Arbitraries.strings().withCharRange('A', 'Z').withChars('_').ofMinLength(1).ofMaxLength(12)
                        .filter(n -> !n.startsWith("GANTRY_") && !n.startsWith("SLURM_")
                                && !JobSpecValidator.RESERVED_ENV.contains(n)),
                Arbitraries.strings().ofMaxLength(30).filter(v -> v.indexOf('\0') < 0
                        && v.chars().noneMatch(c -> Character.isSurrogate((char) c)))).ofMaxSize(5);
        Arbitrary<String> dirs = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(10)
                .map(d -> "/work/" + d).injectNull(0.5);
        Arbitrary<String> images = Arbitraries.of("busybox:1.36", "nvcr.io/nvidia/pytorch:24.05-py3",
                "localhost:5000/team/trainer").injectNull(0.5);
        Arbitrary<List<TaskSpec.Mount>> mounts = Combinators.combine(Arbitraries.integers().between(0, 3),
                Arbitraries.of(true, false)).as((n, ro) -> IntStream.range(0, n).mapToObj(i -> i % 2 == 0
                ? new TaskSpec.Mount("/m" + i, "/host/m" + i, null, ro)
                : new TaskSpec.Mount("/m" + i, null, "claim-" + i, !ro)).toList());
        return Combinators.combine(env, dirs, images, mounts).as((e, d, i, m) -> new TaskSpec("t", 1,
                List.of("x"), 0, null, 1000, 1, null).withRuntime(e, d, i, m));
    }

    private Arbitrary<TaskSpec> task() {
        Arbitrary<Integer> replicas = Arbitraries.integers().between(1, 1024);
        Arbitrary<List<String>> command = Arbitraries.strings().alpha().numeric().withChars(" -./=")
                .ofMinLength(1).ofMaxLength(20).filter(s -> !s.isBlank()).list().ofMinSize(1).ofMaxSize(5);
        Arbitrary<String> model = Arbitraries.of("H100", "A100").injectNull(0.5);
        Arbitrary<Integer> gpus = Arbitraries.integers().between(0, 4);
        Arbitrary<Integer> cpuMillis = Arbitraries.integers().between(1, 256_000);
        Arbitrary<Long> memory = Arbitraries.longs().between(1, 2_000_000);
        Arbitrary<Long> run = Arbitraries.longs().between(1, 86_400).injectNull(0.5);
        return Combinators.combine(replicas, command, model, gpus, cpuMillis, memory, run)
                .as((r, c, m, g, cpu, mem, rs) -> new TaskSpec("t", g > 0 ? 1 : r, c, g, m, cpu, mem, rs));
    }
}
