package io.gantry.placement.core;

import java.util.Set;

/**
 * The placement algorithm: binds every task of a gang to eligible nodes, or none of them.
 *
 * <p>Implementations are pure functions of what they are given, so they can be swapped (topology-aware by
 * default, first fit as a baseline) and tested without any state machine around them. {@link ClusterState} calls
 * the {@link Inventory} variant: a placer that uses the index must leave it exactly as it found it.
 */
public interface GangPlacer {
    PlacementDecision place(InventorySnapshot inventory, GangRequest gang);

    /** How devices may be shared (fractions, MIG); the index needs it to account MIG slots. */
    default GpuSharing sharing() {
        return GpuSharing.DEFAULT;
    }

    /** The GPU tiers this placer resolves (published for admission); none by default. */
    default GpuTiers tiers() {
        return GpuTiers.NONE;
    }

    /** Placement over the live index; by default over a snapshot of it. */
    default PlacementDecision place(Inventory inventory, GangRequest gang) {
        return place(inventory.snapshot(), gang);
    }

    /**
     * The placement over the live index, or null when the gang does not fit: the same answer as
     * {@link #place(Inventory, GangRequest)} without the reason, which a placer may skip working out.
     */
    default PlacementDecision.Placed tryPlace(Inventory inventory, GangRequest gang) {
        return place(inventory, gang) instanceof PlacementDecision.Placed p ? p : null;
    }

    /**
     * False only when the gang certainly fits none of {@code nodeIds} (each looked at on its own): for a gang of one
     * replica that fitted no node before, when only these nodes changed since. True when unsure (by default).
     */
    default boolean mightFitOn(Inventory inventory, GangRequest gang, Set<String> nodeIds) {
        return true;
    }

    /**
     * Of {@code nodeIds}, at most {@code limit} that the gang might fit on (each looked at on its own; any other
     * certainly does not hold it), or null when unsure (by default).
     */
    default Set<String> mightFitNodes(Inventory inventory, GangRequest gang, Set<String> nodeIds, int limit) {
        return null;
    }
}
