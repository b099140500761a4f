package io.gantry.runtime.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterMetersTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final ClusterMeters meters = new ClusterMeters(registry);
    private final AtomicBoolean reports = new AtomicBoolean();
    private final ClusterReporter reporter = reports::get;

    @Test
    void theMetersGoAndThenTheOwnerForgetsOnceWhenTheInstanceStopsReporting() {
        List<String> seen = new ArrayList<>();
        reports.set(true);
        assertThat(meters.follow(reporter, () -> seen.add("stop"))).isTrue();
        meters.add(Counter.builder("gantry.test.jobs").register(registry)).increment();
        assertThat(meters.follow(reporter, () -> seen.add("stop"))).isTrue();
        assertThat(registry.find("gantry.test.jobs").counter()).isNotNull();

        reports.set(false);
        assertThat(meters.follow(reporter, () -> seen.add("stop: the counter is "
                + (registry.find("gantry.test.jobs").counter() == null ? "gone" : "still there")))).isFalse();
        assertThat(seen).containsExactly("stop: the counter is gone");
        assertThat(meters.follow(reporter, () -> seen.add("stop again"))).isFalse();
        assertThat(seen).as("not reporting still is no change").hasSize(1);
    }

    /** What the reporter answers at each call ({@code R} reports, {@code -} does not), and at which calls it stopped. */
    private record Case(String name, String answers, List<Integer> stops) {
    }

    @Test
    void aStopIsTheChangeFromReportingToNotAndNothingElse() {
        List<Case> cases = List.of(
                new Case("never reporting, from the start", "---", List.of()),
                new Case("reporting throughout", "RRR", List.of()),
                new Case("begins to report", "-RR", List.of()),
                new Case("stops once, then stays off", "RR--", List.of(2)),
                new Case("stops, reports again, stops again", "R-R-", List.of(1, 3)),
                new Case("a blip while reporting", "RR-RR", List.of(2)));
        for (Case c : cases) {
            ClusterMeters fresh = new ClusterMeters(registry);
            List<Integer> stops = new ArrayList<>();
            for (int i = 0; i < c.answers().length(); i++) {
                reports.set(c.answers().charAt(i) == 'R');
                int call = i;
                assertThat(fresh.follow(reporter, () -> stops.add(call))).as(c.name() + ", call " + call)
                        .isEqualTo(reports.get());
            }
            assertThat(stops).as(c.name()).isEqualTo(c.stops());
        }
    }

    @Test
    void metersRegisteredInALaterReportAreRemovedAtItsEndToo() {
        reports.set(true);
        meters.follow(reporter, () -> { });
        meters.add(Counter.builder("gantry.test.first").register(registry));
        reports.set(false);
        meters.follow(reporter, () -> { });
        reports.set(true);
        meters.follow(reporter, () -> { });
        meters.add(Counter.builder("gantry.test.second").register(registry)).increment();
        assertThat(registry.find("gantry.test.second").counter().count()).as("a new report counts from zero").isEqualTo(1);

        reports.set(false);
        meters.follow(reporter, () -> { });
        assertThat(registry.find("gantry.test.first").counter()).isNull();
        assertThat(registry.find("gantry.test.second").counter()).isNull();
    }
}
