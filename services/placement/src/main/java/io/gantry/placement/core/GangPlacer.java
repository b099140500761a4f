package io.gantry.placement.core;

/**
 * The placement algorithm: binds every task of a gang to eligible nodes, or none of them.
 *
 * <p>Implementations are pure functions of their arguments, so they can be swapped (first fit today,
 * topology-aware later) and tested without any state machine around them.
 */
public interface GangPlacer {
    PlacementDecision place(InventorySnapshot inventory, GangRequest gang);
}
