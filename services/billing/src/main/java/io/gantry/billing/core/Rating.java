package io.gantry.billing.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rates a released allocation: one ledger entry per node, in the order the nodes first appear. A whole GPU counts
 * 1000 thousandths, a fraction or MIG instance its {@code milli}, and usage is thousandths x milliseconds, exact.
 *
 * <p>Time is billed at millisecond resolution, the resolution of the events ({@code timestamp-millis}); a
 * sub-millisecond part of an instant is dropped before rating so both ends are treated alike.
 */
public final class Rating {
    private Rating() {
    }

    public static List<LedgerEntry> rate(Release release) {
        Map<String, NodeShare> byNode = new LinkedHashMap<>();
        for (Placement p : release.placements()) {
            NodeShare share = byNode.computeIfAbsent(p.nodeId(), NodeShare::new);
            share.add(p);
        }
        long start = release.grantedAt().toEpochMilli();
        long end = release.releasedAt().toEpochMilli();
        long duration = end - start;
        List<LedgerEntry> entries = new ArrayList<>(byNode.size());
        for (NodeShare share : byNode.values()) {
            entries.add(new LedgerEntry(LedgerEntry.entryId(release.allocationId(), share.nodeId),
                    release.tenant(), release.jobId(), release.attempt(), release.allocationId(), share.nodeId,
                    share.gpuModel, share.gpuCount, Instant.ofEpochMilli(start), Instant.ofEpochMilli(end), duration,
                    Math.multiplyExact(share.gpuMilli, duration) / 1000, share.gpuMilli,
                    Math.multiplyExact(share.gpuMilli, duration), share.cpuMillis, share.memoryMiB,
                    release.reason(), share.migInstances));
        }
        return entries;
    }

    private static final class NodeShare {
        final String nodeId;
        String gpuModel;
        int gpuCount;
        long gpuMilli;
        long cpuMillis;
        long memoryMiB;
        java.util.SortedMap<String, Integer> migInstances = java.util.Collections.emptySortedMap();

        NodeShare(String nodeId) {
            this.nodeId = nodeId;
        }

        void add(Placement p) {
            cpuMillis = Math.addExact(cpuMillis, p.cpuMillis());
            memoryMiB = Math.addExact(memoryMiB, p.memoryMiB());
            if (p.gpuMilli() == 0) {
                return;
            }
            if (gpuModel != null && !gpuModel.equals(p.gpuModel())) {
                // the entry id is per node, so one entry cannot carry two models; refuse rather than misbill
                throw new IllegalArgumentException("node " + nodeId + " holds two GPU models in one allocation: "
                        + gpuModel + " and " + p.gpuModel());
            }
            gpuModel = p.gpuModel();
            gpuCount = Math.addExact(gpuCount, p.gpuCount());
            gpuMilli = Math.addExact(gpuMilli, p.gpuMilli());
            migInstances = MigInstances.plus(migInstances, p.migInstances());
        }
    }
}
