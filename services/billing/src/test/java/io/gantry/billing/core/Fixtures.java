package io.gantry.billing.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Fluent fixtures: {@code aRelease("alloc-1").tenant("vision").from(0).to(60_000).task("n1", "H100", 2).build()}. */
final class Fixtures {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private Fixtures() {
    }

    static Instant at(long millis) {
        return T0.plusMillis(millis);
    }

    static ReleaseBuilder aRelease(String allocationId) {
        return new ReleaseBuilder(allocationId);
    }

    static EntryBuilder anEntry(String entryId) {
        return new EntryBuilder(entryId);
    }

    static final class ReleaseBuilder {
        private final String allocationId;
        private String tenant = "vision";
        private String jobId = "job-1";
        private int attempt = 1;
        private long from;
        private long to = 60_000;
        private final List<Placement> placements = new ArrayList<>();

        ReleaseBuilder(String allocationId) {
            this.allocationId = allocationId;
        }

        ReleaseBuilder tenant(String t) {
            tenant = t;
            return this;
        }

        ReleaseBuilder job(String id, int attempt) {
            this.jobId = id;
            this.attempt = attempt;
            return this;
        }

        ReleaseBuilder heldMillis(long fromMillis, long toMillis) {
            this.from = fromMillis;
            this.to = toMillis;
            return this;
        }

        ReleaseBuilder task(String node, String model, int gpus) {
            placements.add(new Placement(node, model, gpus));
            return this;
        }

        /** A task holding part of one GPU: {@code milli} thousandths (a fraction or a MIG instance). */
        ReleaseBuilder share(String node, String model, int milli) {
            placements.add(new Placement(node, model, 0, milli));
            return this;
        }

        ReleaseBuilder cpuTask(String node) {
            placements.add(new Placement(node, null, 0));
            return this;
        }

        Release build() {
            return new Release(tenant, jobId, attempt, allocationId, at(from), at(to), placements);
        }
    }

    static final class EntryBuilder {
        private final String entryId;
        private String tenant = "vision";
        private String model = "H100";
        private int gpus = 1;
        private long from;
        private long to = 1_000;

        EntryBuilder(String entryId) {
            this.entryId = entryId;
        }

        EntryBuilder tenant(String t) {
            tenant = t;
            return this;
        }

        EntryBuilder gpus(String model, int count) {
            this.model = model;
            this.gpus = count;
            return this;
        }

        EntryBuilder heldMillis(long fromMillis, long toMillis) {
            this.from = fromMillis;
            this.to = toMillis;
            return this;
        }

        LedgerEntry build() {
            long d = to - from;
            return new LedgerEntry(entryId, tenant, "job-1", 1, "alloc-1", "n1", model, gpus, at(from), at(to), d,
                    gpus * d);
        }
    }
}
