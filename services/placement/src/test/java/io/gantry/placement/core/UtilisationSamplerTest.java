package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Per-run utilisation windows from per-GPU samples: what billing's held-vs-used and idle views are made of. */
class UtilisationSamplerTest {
    static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");

    static Allocation run(String job, String node, List<Integer> whole, List<GpuShare> shares) {
        return new Allocation("alloc-" + job, job, "vision", 1, List.of(new PlacedTask("w", 0, node, "A100", whole,
                1000, 1024, List.of(), null, shares)), T0, "simulated");
    }

    static Map<String, Map<Integer, Integer>> busy(String node, Object... indexPct) {
        Map<Integer, Integer> m = new java.util.TreeMap<>();
        for (int i = 0; i < indexPct.length; i += 2) {
            m.put((Integer) indexPct[i], (Integer) indexPct[i + 1]);
        }
        return Map.of(node, m);
    }

    @Test
    void twoGpusAtHalfAndFullLoadForAWindowAreOneAndAHalfGpusBusyOfTwoHeld() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(5), 5);
        Allocation a = run("j", "n1", List.of(0, 1), List.of());
        assertThat(s.observe(T0, busy("n1", 0, 50, 1, 100), List.of(a))).isEmpty();
        assertThat(s.observe(T0.plusSeconds(150), busy("n1", 0, 50, 1, 100), List.of(a))).isEmpty();

        List<UtilisationSampler.Window> w = s.observe(T0.plusSeconds(300), busy("n1", 0, 50, 1, 100), List.of(a));

        assertThat(w).singleElement().satisfies(x -> {
            assertThat(x.from()).isEqualTo(T0);
            assertThat(x.to()).isEqualTo(T0.plusSeconds(300));
            assertThat(x.heldGpuMilli()).isEqualTo(2000);
            assertThat(x.usedGpuMilli()).isEqualTo(1500);
            assertThat(x.samples()).isEqualTo(2);
            assertThat(x.idleSince()).isNull();
        });
    }

    @Test
    void aSampleDescribesTheTimeSinceThePreviousOneSoALongerStretchWeighsMore() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(5), 5);
        Allocation a = run("j", "n1", List.of(0), List.of());
        s.observe(T0, busy("n1", 0, 0), List.of(a));
        s.observe(T0.plusSeconds(60), busy("n1", 0, 100), List.of(a));
        List<UtilisationSampler.Window> w = s.observe(T0.plusSeconds(300), busy("n1", 0, 0), List.of(a));
        assertThat(w).singleElement().satisfies(x -> assertThat(x.usedGpuMilli()).isEqualTo(200));
    }

    @Test
    void aFractionWeighsItsShareOfTheGpuAndUnreportedGpusCountInNeitherFigure() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(1), 5);
        Allocation a = new Allocation("alloc-j", "j", "vision", 1, List.of(
                new PlacedTask("w", 0, "n1", "A100", List.of(), 1000, 1024, List.of(), null,
                        List.of(new GpuShare(3, 500, 20_000, null, null))),
                new PlacedTask("w", 1, "n2", "A100", List.of(0), 1000, 1024, List.of(), null)), T0, "simulated");
        s.observe(T0, busy("n1", 3, 80), List.of(a));
        List<UtilisationSampler.Window> w = s.observe(T0.plusSeconds(60), busy("n1", 3, 80), List.of(a));
        assertThat(w).singleElement().satisfies(x -> {
            assertThat(x.heldGpuMilli()).isEqualTo(500);
            assertThat(x.usedGpuMilli()).isEqualTo(400);
        });
    }

    @Test
    void anIdleRunSaysSinceWhenAndABusySampleEndsTheIdleStretch() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(1), 5);
        Allocation a = run("j", "n1", List.of(0), List.of());
        s.observe(T0, busy("n1", 0, 90), List.of(a));
        s.observe(T0.plusSeconds(30), busy("n1", 0, 3), List.of(a));
        assertThat(s.observe(T0.plusSeconds(60), busy("n1", 0, 0), List.of(a)))
                .singleElement().satisfies(x -> assertThat(x.idleSince()).isEqualTo(T0));
        assertThat(s.observe(T0.plusSeconds(120), busy("n1", 0, 0), List.of(a)))
                .singleElement().satisfies(x -> assertThat(x.idleSince()).isEqualTo(T0));
        assertThat(s.observe(T0.plusSeconds(180), busy("n1", 0, 40), List.of(a)))
                .singleElement().satisfies(x -> assertThat(x.idleSince()).isNull());
    }

    @Test
    void aRunThatEndedClosesItsLastShorterWindowOnceAndIsForgotten() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(5), 5);
        Allocation a = run("j", "n1", List.of(0), List.of());
        s.observe(T0, busy("n1", 0, 100), List.of(a));
        s.observe(T0.plusSeconds(40), busy("n1", 0, 100), List.of(a));

        List<UtilisationSampler.Window> w = s.observe(T0.plusSeconds(50), busy("n1", 0, 0), List.of());

        assertThat(w).singleElement().satisfies(x -> {
            assertThat(x.to()).isEqualTo(T0.plusSeconds(40));
            assertThat(x.usedGpuMilli()).isEqualTo(1000);
        });
        assertThat(s.watched()).isZero();
        assertThat(s.observe(T0.plusSeconds(60), busy("n1", 0, 0), List.of())).isEmpty();
    }

    @Test
    void aBackendThatReportsNothingYieldsNothing() {
        UtilisationSampler s = new UtilisationSampler(Duration.ofMinutes(1), 5);
        Allocation a = run("j", "n1", List.of(0), List.of());
        for (int i = 0; i < 10; i++) {
            assertThat(s.observe(T0.plusSeconds(60L * i), Map.of(), List.of(a))).isEmpty();
        }
        assertThat(s.watched()).isZero();
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> new UtilisationSampler(Duration.ZERO, 5)).hasMessageContaining("window");
        assertThatThrownBy(() -> new UtilisationSampler(Duration.ofMinutes(1), 101)).hasMessageContaining("idlePercent");
    }
}
