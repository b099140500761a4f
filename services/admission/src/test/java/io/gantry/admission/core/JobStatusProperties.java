package io.gantry.admission.core;

import io.gantry.admission.core.AdmissionFact.Kind;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.Tuple.Tuple2;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read model sees a job's events from four topics in no fixed order, and sometimes more than once. Whatever
 * the order and however often, the job must end in the same status.
 */
class JobStatusProperties {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    @Property(tries = 500)
    void anyOrderOfTheSameEventsGivesTheSameStatus(@ForAll("historyAndPermutation") Tuple2<List<AdmissionFact>, List<AdmissionFact>> h) {
        assertThat(Facts.fold(h.get2())).isEqualTo(Facts.fold(h.get1()));
    }

    @Property(tries = 300)
    void seeingEventsAgainChangesNothing(@ForAll("histories") List<AdmissionFact> facts,
                                         @ForAll("indices") List<Integer> repeats) {
        List<AdmissionFact> withRepeats = new ArrayList<>(facts);
        repeats.forEach(i -> withRepeats.add(facts.get(i % facts.size())));

        assertThat(Facts.fold(withRepeats)).isEqualTo(Facts.fold(facts));
    }

    @Property(tries = 300)
    void aTerminalEventAlwaysEndsTheJob(@ForAll("histories") List<AdmissionFact> facts) {
        boolean anyTerminal = facts.stream().anyMatch(f -> f.kind() == Kind.JOB_SUCCEEDED
                || f.kind() == Kind.JOB_FAILED || f.kind() == Kind.JOB_CANCELLED);

        JobStatus status = Facts.fold(facts);

        assertThat(status.state().isTerminal()).isEqualTo(anyTerminal);
        if (anyTerminal) {
            assertThat(status.waitReason()).isNull();
        }
    }

    @Provide
    Arbitrary<Tuple2<List<AdmissionFact>, List<AdmissionFact>>> historyAndPermutation() {
        return histories().flatMap(h -> Arbitraries.shuffle(h).map(p -> Tuple.of(h, p)));
    }

    @Provide
    Arbitrary<List<Integer>> indices() {
        return Arbitraries.integers().between(0, 1000).list().ofMinSize(1).ofMaxSize(10);
    }

    @Provide
    Arbitrary<List<AdmissionFact>> histories() {
        return fact().list().ofMinSize(1).ofMaxSize(25).map(facts -> IntStream.range(0, facts.size())
                // the event id is the identity of an event: give every generated one its own
                .mapToObj(i -> new AdmissionFact("e" + i, facts.get(i).occurredAt(), facts.get(i).kind(),
                        facts.get(i).attempt(), facts.get(i).reason(), facts.get(i).message(),
                        facts.get(i).placements(), facts.get(i).deadline(), facts.get(i).cause()))
                .toList());
    }

    private Arbitrary<AdmissionFact> fact() {
        Arbitrary<Kind> kinds = Arbitraries.of(Kind.class);
        // few distinct seconds, so that ties in time are common and the tie-breaks are exercised
        Arbitrary<Instant> times = Arbitraries.integers().between(0, 8).map(T0::plusSeconds);
        Arbitrary<Integer> attempts = Arbitraries.integers().between(0, 3);
        Arbitrary<String> reasons = Arbitraries.of("NODE_FAILED", "RUN_SUCCEEDED", "CANCELLED", "QUOTA", "CAPACITY");
        Arbitrary<String> messages = Arbitraries.of("m1", "m2", "m3");
        Arbitrary<List<Placement>> placements = Combinators.combine(Arbitraries.of("n1", "n2", "n3"),
                        Arbitraries.integers().between(0, 7))
                .as((node, gpu) -> new Placement("worker", 0, node, "H100", List.of(gpu)))
                .list().ofMaxSize(2);
        Arbitrary<String> causes = Arbitraries.of("COHORT_FULL", "FRAGMENTED").injectNull(0.3);
        return Combinators.combine(kinds, times, attempts, reasons, messages, placements, causes)
                .as((kind, at, attempt, reason, message, p, cause) -> new AdmissionFact("x", at, kind,
                        kind == Kind.JOB_SUBMITTED || kind == Kind.JOB_CANCEL_REQUESTED ? null : attempt,
                        reason, message, kind == Kind.ALLOCATION_GRANTED ? p : List.of(),
                        kind == Kind.RUN_STOP_REQUESTED ? at.plusSeconds(30) : null,
                        kind == Kind.JOB_WAITING ? cause : null));
    }
}
