package io.gantry.placement.backend;

import io.gantry.placement.backend.SuccessRule.Replica;
import io.gantry.placement.backend.SuccessRule.Verdict;
import io.gantry.placement.core.PlacedTask;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What the success rule promises every backend, for any gang, leader and set of ends. */
class SuccessRuleProperties {

    record Case(List<PlacedTask> gang, String leader, Map<Replica, Boolean> ended) {
    }

    @Property(tries = 500)
    void aRunFailsExactlyWhenATaskEndedUnsuccessfully(@ForAll("cases") Case c) {
        Verdict v = SuccessRule.judge(c.gang(), c.leader(), c.ended());

        assertThat(v == Verdict.FAILED).isEqualTo(c.ended().containsValue(false));
    }

    @Property(tries = 500)
    void aRunSucceedsOnlyWhenEveryDecidingTaskExitedZeroAndMoreSuccessesNeverUndoIt(@ForAll("cases") Case c) {
        Verdict v = SuccessRule.judge(c.gang(), c.leader(), c.ended());
        if (v != Verdict.SUCCEEDED) {
            return;
        }
        assertThat(SuccessRule.deciding(c.gang(), c.leader()))
                .allSatisfy(p -> assertThat(c.ended().get(Replica.of(p))).isTrue());
        Map<Replica, Boolean> all = new HashMap<>(c.ended());
        c.gang().forEach(p -> all.put(Replica.of(p), true));
        assertThat(SuccessRule.judge(c.gang(), c.leader(), all)).isEqualTo(Verdict.SUCCEEDED);
    }

    @Property(tries = 200)
    void everyTaskExitingZeroIsASuccessWhateverTheLeader(@ForAll("cases") Case c) {
        Map<Replica, Boolean> all = new HashMap<>();
        c.gang().forEach(p -> all.put(Replica.of(p), true));

        assertThat(SuccessRule.judge(c.gang(), c.leader(), all)).isEqualTo(Verdict.SUCCEEDED);
    }

    @Provide
    Arbitrary<Case> cases() {
        Arbitrary<List<Integer>> groupSizes = Arbitraries.integers().between(1, 4).list().ofMinSize(1).ofMaxSize(4);
        return groupSizes.flatMap(sizes -> {
            List<PlacedTask> gang = new ArrayList<>();
            for (int g = 0; g < sizes.size(); g++) {
                for (int r = 0; r < sizes.get(g); r++) {
                    gang.add(new PlacedTask("g" + g, r, "n" + r, null, List.of(), 1000, 64));
                }
            }
            Arbitrary<String> leader = Arbitraries.of("g0", "g" + (sizes.size() - 1), "ghost").injectNull(0.4);
            Arbitrary<List<Integer>> ends = Arbitraries.integers().between(0, 2).list().ofSize(gang.size());
            return Combinators.combine(leader, ends).as((l, e) -> {
                Map<Replica, Boolean> ended = new HashMap<>();
                for (int i = 0; i < gang.size(); i++) {
                    // 0: still running, 1: exited 0, 2: failed
                    if (e.get(i) > 0) {
                        ended.put(Replica.of(gang.get(i)), e.get(i) == 1);
                    }
                }
                return new Case(gang, l, ended);
            });
        });
    }
}
