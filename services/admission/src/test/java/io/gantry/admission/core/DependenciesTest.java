package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.gantry.admission.core.SpecTrees.aJob;
import static io.gantry.admission.core.SpecTrees.cluster;
import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Dependencies, suspend and interactive (idle reclamation's opt-out) at submit: validated naming the field, carried
 * into the spec and shown back.
 */
class DependenciesTest {
    private static final ClusterLimits CLUSTER = cluster(List.of(gpus(8, "H100")));
    /** Tenant a's jobs; "theirs" exists too, but belongs to another tenant, so the lookup never returns it. */
    private static final Set<String> MINE = Set.of("prep", "j-1", "j-2");
    private static final JobSpecValidator.OwnJobs OWN = ids -> ids.stream().filter(MINE::contains)
            .collect(Collectors.toSet());
    private final JobSpecValidator validator = new JobSpecValidator();

    private static Map<String, Object> dep(String jobId) {
        return Map.of("jobId", jobId);
    }

    private Validated validate(Object tree) {
        return validator.validate(tree, CLUSTER, SchedulingCatalog.unknown(), "a", OWN, "self-id");
    }

    static Stream<Arguments> refused() {
        List<Object> tooMany = new ArrayList<>();
        for (int i = 0; i < 65; i++) {
            tooMany.add(dep("j-" + i));
        }
        return Stream.of(
                arguments("another tenant's job, alike a missing one", List.of(dep("prep"), dep("theirs")),
                        "dependencies[1].jobId", "no job theirs of yours"),
                arguments("an unknown job", List.of(dep("nope")), "dependencies[0].jobId", "no job nope of yours"),
                arguments("the job itself", List.of(dep("self-id")), "dependencies[0].jobId", "is this job itself"),
                arguments("the same job twice", List.of(dep("prep"), dep("j-1"), dep("prep")),
                        "dependencies[2].jobId", "duplicate dependency prep (also dependencies[0])"),
                arguments("more than 64", tooMany, "dependencies", "at most 64 dependencies, not 65"),
                arguments("an id that is no job id", List.of(dep("a b")), "dependencies[0].jobId", "is not a job id"),
                arguments("no job id", List.of(Map.of("condition", "afterok")), "dependencies[0].jobId",
                        "is required"),
                arguments("an unknown condition", List.of(Map.of("jobId", "prep", "condition", "after")),
                        "dependencies[0].condition", "must be one of afterok, afterany, afternotok"),
                arguments("an unknown field", List.of(Map.of("jobId", "prep", "type", "afterok")),
                        "dependencies[0].type", "unknown field"),
                arguments("not a list", "prep", "dependencies", "must be a list"),
                arguments("an entry that is not an object", List.of("prep"), "dependencies[0]", "must be an object"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refused")
    void refusesBadDependenciesNamingTheField(String description, Object dependencies, String field, String message) {
        Validated v = validate(aJob().set("dependencies", dependencies).build());

        assertThat(v.isValid()).isFalse();
        assertThat(v.errors()).anySatisfy(e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.message()).contains(message);
        });
    }

    @Test
    void anotherTenantsJobGetsExactlyTheAnswerOfAMissingOne() {
        String theirs = validate(aJob().set("dependencies", List.of(dep("theirs"))).build()).errors().get(0).message();
        String missing = validate(aJob().set("dependencies", List.of(dep("zzzzzz"))).build()).errors().get(0)
                .message();

        assertThat(theirs.replace("theirs", "X")).isEqualTo(missing.replace("zzzzzz", "X"));
    }

    @Test
    void dependenciesAreCarriedWithAfterokAsTheDefaultConditionAndShownBack() {
        Validated v = validate(aJob().set("dependencies", List.of(dep("prep"),
                Map.of("jobId", "j-1", "condition", "AfterAny"), Map.of("jobId", "j-2", "condition", "afternotok")))
                .set("suspend", true).build());

        assertThat(v.errors()).isEmpty();
        assertThat(v.spec().dependencies()).containsExactly(new JobSpec.Dependency("prep", "afterok"),
                new JobSpec.Dependency("j-1", "afterany"), new JobSpec.Dependency("j-2", "afternotok"));
        assertThat(v.spec().suspend()).isTrue();
        assertThat(JobSpecTree.toTree(v.spec()).get("dependencies")).isEqualTo(List.of(
                Map.of("jobId", "prep", "condition", "afterok"), Map.of("jobId", "j-1", "condition", "afterany"),
                Map.of("jobId", "j-2", "condition", "afternotok")));
        assertThat(JobSpecTree.toTree(v.spec()).get("suspend")).isEqualTo(true);
    }

    @Test
    void aBatchJobDeclaresItselfNotInteractiveAndAnythingButABooleanIsRefusedNamingTheField() {
        JobSpec batch = validate(aJob().set("interactive", false).build()).spec();
        assertThat(batch.interactive()).isFalse();
        assertThat(JobSpecTree.toTree(batch).get("interactive")).isEqualTo(false);
        assertThat(io.gantry.admission.kafka.WireMapping.toAvro(batch).getInteractive()).isFalse();

        JobSpec unsaid = validate(aJob().build()).spec();
        assertThat(unsaid.interactive()).as("the default: reclaimable where the queue opted in").isTrue();
        assertThat(JobSpecTree.toTree(unsaid)).doesNotContainKey("interactive");
        assertThat(io.gantry.admission.kafka.WireMapping.toAvro(unsaid).getInteractive()).isTrue();

        assertThat(validate(aJob().set("interactive", "no").build()).errors())
                .anySatisfy(e -> assertThat(e.field()).isEqualTo("interactive"));
    }

    @Test
    void suspendMustBeABoolean() {
        assertThat(validate(aJob().set("suspend", "yes").build()).errors())
                .anySatisfy(e -> assertThat(e.field()).isEqualTo("suspend"));
    }

    @Test
    void withoutEitherTheSpecHasNoDependenciesAndIsNotSuspended() {
        JobSpec spec = validate(aJob().build()).spec();

        assertThat(spec.dependencies()).isEmpty();
        assertThat(spec.suspend()).isFalse();
        assertThat(JobSpecTree.toTree(spec)).doesNotContainKeys("dependencies", "suspend");
    }
}
