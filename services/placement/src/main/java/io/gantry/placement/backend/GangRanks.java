package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one numbering of a gang's ranks that every backend uses, so a job sees the same {@code RANK} for the same task
 * on any backend: task groups in spec order (the order the placer lists them in an allocation), replicas in
 * ascending order within a group. Rank 0 is the first replica of the first group: the rendezvous host.
 */
public final class GangRanks {
    private GangRanks() {
    }

    /** The allocation's placements in rank order. */
    public static List<PlacedTask> inRankOrder(Allocation allocation) {
        Map<String, Integer> groupOrder = new LinkedHashMap<>();
        for (PlacedTask p : allocation.placements()) {
            groupOrder.putIfAbsent(p.task(), groupOrder.size());
        }
        List<PlacedTask> ranks = new ArrayList<>(allocation.placements());
        ranks.sort(Comparator.comparingInt((PlacedTask p) -> groupOrder.get(p.task()))
                .thenComparingInt(PlacedTask::replica));
        return List.copyOf(ranks);
    }

    /** The rank of {@code task} in the gang, or -1 when it is none of the allocation's placements. */
    public static int rank(Allocation allocation, PlacedTask task) {
        List<PlacedTask> ranks = inRankOrder(allocation);
        for (int i = 0; i < ranks.size(); i++) {
            if (ranks.get(i).task().equals(task.task()) && ranks.get(i).replica() == task.replica()) {
                return i;
            }
        }
        return -1;
    }
}
