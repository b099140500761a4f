package io.gantry.placement.core;

import java.util.Comparator;
import java.util.List;

/** An immutable picture of every known node, sorted by node id: the only input a {@link GangPlacer} sees. */
public record InventorySnapshot(List<NodeView> nodes) {
    public InventorySnapshot {
        nodes = nodes.stream().sorted(Comparator.comparing(NodeView::nodeId)).toList();
    }

    public List<NodeView> eligible() {
        return nodes.stream().filter(NodeView::eligible).toList();
    }

    public int eligibleGpus() {
        return eligible().stream().mapToInt(n -> n.spec().gpuCount()).sum();
    }

    public int eligibleFreeGpus() {
        return eligible().stream().mapToInt(NodeView::freeGpuCount).sum();
    }
}
