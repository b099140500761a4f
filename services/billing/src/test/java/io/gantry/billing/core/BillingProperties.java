package io.gantry.billing.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static io.gantry.billing.core.Fixtures.at;
import static org.assertj.core.api.Assertions.assertThat;

class BillingProperties {

    @Provide
    Arbitrary<List<LedgerEntry>> ledgers() {
        Arbitrary<LedgerEntry> entry = Combinators.combine(
                Arbitraries.of("vision", "nlp", "speech"),
                Arbitraries.of("H100", "A100"),
                Arbitraries.integers().between(0, 8),
                Arbitraries.longs().between(0, 100_000),
                Arbitraries.longs().between(0, 50_000),
                Arbitraries.integers().between(0, 1_000_000))
                .as((tenant, model, gpus, start, length, id) -> new LedgerEntry("a" + id + "/n1", tenant, "job", 1,
                        "a" + id, "n1", gpus == 0 ? null : model, gpus, at(start), at(start + length), length,
                        gpus * length));
        return entry.list().ofMaxSize(30);
    }

    @Property
    void theUsageOfAWindowIsTheSumOverAnyPartitionOfIt(
            @ForAll("ledgers") List<LedgerEntry> ledger,
            @ForAll("cuts") List<Long> cuts) {
        TreeSet<Long> points = new TreeSet<>(cuts);
        long from = points.first();
        long to = points.last();
        if (from == to) {
            return;
        }
        UsageReport whole = Usage.summarize(ledger, new UsageWindow(at(from), at(to)));

        Map<String, Long> summed = new HashMap<>();
        Long previous = null;
        for (long point : points) {
            if (previous != null) {
                for (UsageRow row : Usage.summarize(ledger, new UsageWindow(at(previous), at(point))).rows()) {
                    summed.merge(row.tenant() + "/" + row.gpuModel(), row.gpuMillis(), Long::sum);
                }
            }
            previous = point;
        }
        Map<String, Long> expected = new HashMap<>();
        whole.rows().forEach(r -> expected.put(r.tenant() + "/" + r.gpuModel(), r.gpuMillis()));
        summed.values().removeIf(v -> v == 0);
        expected.values().removeIf(v -> v == 0);
        assertThat(summed).isEqualTo(expected);
    }

    @Provide
    Arbitrary<List<Long>> cuts() {
        return Arbitraries.longs().between(-1_000, 160_000).list().ofMinSize(2).ofMaxSize(12);
    }

    @Provide
    Arbitrary<Release> releases() {
        Arbitrary<Placement> placement = Combinators.combine(
                        Arbitraries.of("n1", "n2", "n3", "n4"), Arbitraries.integers().between(0, 8))
                .as((node, gpus) -> new Placement(node, gpus == 0 ? null : "H100", gpus));
        return Combinators.combine(
                        placement.list().ofMaxSize(12),
                        Arbitraries.longs().between(0, 4_000_000_000_000L),
                        Arbitraries.longs().between(0, 400L * 24 * 3_600_000))
                .as((placements, start, length) -> new Release("vision", "job", 1, "alloc",
                        Instant.ofEpochMilli(start), Instant.ofEpochMilli(start + length), placements));
    }

    @Property
    void ratingIsExactAndBillsEveryGpuForTheWholeInterval(@ForAll("releases") Release release) {
        List<LedgerEntry> entries = Rating.rate(release);
        long duration = release.releasedAt().toEpochMilli() - release.grantedAt().toEpochMilli();
        long gpus = release.placements().stream().mapToLong(Placement::gpuCount).sum();

        assertThat(entries.stream().mapToLong(LedgerEntry::gpuMillis).sum()).isEqualTo(gpus * duration);
        assertThat(entries.stream().mapToLong(LedgerEntry::gpuCount).sum()).isEqualTo(gpus);
        assertThat(entries).allSatisfy(e -> assertThat(e.durationMillis()).isEqualTo(duration));
        assertThat(entries.stream().map(LedgerEntry::nodeId).toList()).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(new TreeSet<>(
                        release.placements().stream().map(Placement::nodeId).toList()));
        // the whole ledger rated from this release, read over all time, is exactly what was held
        assertThat(Usage.summarize(entries, UsageWindow.all()).totalGpuMillis()).isEqualTo(gpus * duration);
    }
}
