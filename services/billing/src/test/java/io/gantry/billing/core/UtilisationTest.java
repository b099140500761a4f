package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** GPU time held vs used and idle allocations, from placement's utilisation windows. */
class UtilisationTest {
    static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");

    static Utilisation.Window w(String tenant, String alloc, long fromSec, long toSec, long held, long used,
                                Instant idleSince) {
        return new Utilisation.Window(tenant, "job-" + alloc, 1, alloc, T0.plusSeconds(fromSec), T0.plusSeconds(toSec),
                held, used, 30, idleSince);
    }

    @Test
    void heldAndUsedAddUpPerTenantWithAPercentage() {
        List<Utilisation.TenantUtilisation> u = Utilisation.heldVsUsed(List.of(
                w("vision", "a", 0, 300, 2000, 1500, null),
                w("vision", "b", 0, 300, 1000, 0, T0),
                w("nlp", "c", 0, 600, 500, 500, null)), UsageWindow.all());

        assertThat(u).extracting(Utilisation.TenantUtilisation::tenant).containsExactly("nlp", "vision");
        assertThat(u.get(1).heldGpuMicros()).isEqualTo(3000L * 300_000);
        assertThat(u.get(1).usedGpuMicros()).isEqualTo(1500L * 300_000);
        assertThat(u.get(1).usedPercent()).isEqualByComparingTo("50.00");
        assertThat(u.get(0).usedPercent()).isEqualByComparingTo("100.00");
    }

    @Test
    void aWindowCutByTheReportWindowCountsProRataExactly() {
        List<Utilisation.TenantUtilisation> u = Utilisation.heldVsUsed(List.of(w("vision", "a", 0, 300, 1000, 333, null)),
                new UsageWindow(T0.plusSeconds(100), T0.plusSeconds(200)));
        assertThat(u).singleElement().satisfies(x -> {
            assertThat(x.heldGpuMicros()).isEqualTo(1000L * 100_000);
            assertThat(x.usedGpuMicros()).isEqualTo(333L * 100_000);
            assertThat(x.usedPercent()).isEqualByComparingTo("33.30");
        });
    }

    @Test
    void onlyRunsIdleForAtLeastTheMinimumAreListedLongestIdleFirst() {
        Instant now = T0.plusSeconds(3600);
        List<Utilisation.IdleAllocation> idle = Utilisation.idle(List.of(
                w("vision", "busy", 3000, 3600, 1000, 900, null),
                w("vision", "short", 3000, 3600, 1000, 0, now.minusSeconds(600)),
                w("vision", "long", 3000, 3600, 4000, 40, now.minusSeconds(2400))), now, Duration.ofMinutes(30));

        assertThat(idle).singleElement().satisfies(i -> {
            assertThat(i.allocationId()).isEqualTo("long");
            assertThat(i.idleFor()).isEqualTo(Duration.ofMinutes(40));
            assertThat(i.heldGpuMilli()).isEqualTo(4000);
        });
        assertThat(Utilisation.idle(List.of(w("vision", "short", 3000, 3600, 1000, 0, now.minusSeconds(600)),
                w("vision", "long", 3000, 3600, 4000, 40, now.minusSeconds(2400))), now, Duration.ZERO))
                .extracting(Utilisation.IdleAllocation::allocationId).containsExactly("long", "short");
    }

    @Test
    void aWindowUsingMoreThanItHoldsIsRefusedNamingTheField() {
        assertThatThrownBy(() -> w("vision", "a", 0, 300, 1000, 1001, null)).hasMessageStartingWith("usedGpuMilli");
        assertThatThrownBy(() -> w("vision", "a", 300, 0, 1000, 0, null)).hasMessageStartingWith("windowTo");
    }
}
