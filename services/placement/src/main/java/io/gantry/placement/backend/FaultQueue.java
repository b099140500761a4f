package io.gantry.placement.backend;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Device faults waiting to be published, per node, so that a flood from one node does not starve the others: a
 * drain hands over at most {@code perNode} faults of each node, oldest first, and keeps the rest for the next. A
 * fault identical to one still waiting (same GPU, kind and Xid code) is folded into it, and a node holds at most
 * {@link #MAX_PENDING_PER_NODE} distinct faults (more are dropped and counted): memory and work stay bounded however
 * fast a device repeats itself. Not thread-safe: the backends call it on the event loop (the local backend's
 * reader hands its samples over through {@link #offer} under its own lock).
 */
public final class FaultQueue {
    /** Distinct faults a node may have waiting; more are dropped (and counted in {@link #dropped}). */
    public static final int MAX_PENDING_PER_NODE = 256;
    private final Map<String, LinkedHashMap<String, DeviceFault>> pending = new TreeMap<>();
    private long folded;
    private long dropped;

    /** Queues the fault; false when it was folded into an identical waiting one or dropped. */
    public synchronized boolean offer(DeviceFault f) {
        LinkedHashMap<String, DeviceFault> q = pending.computeIfAbsent(f.nodeId(), n -> new LinkedHashMap<>());
        if (q.containsKey(f.floodKey())) {
            folded++;
            return false;
        }
        if (q.size() >= MAX_PENDING_PER_NODE) {
            dropped++;
            return false;
        }
        q.put(f.floodKey(), f);
        return true;
    }

    /** At most {@code perNode} faults of every node, nodes by id, each node's oldest first. */
    public synchronized List<DeviceFault> drain(int perNode) {
        List<DeviceFault> out = new ArrayList<>();
        for (Iterator<LinkedHashMap<String, DeviceFault>> nodes = pending.values().iterator(); nodes.hasNext(); ) {
            LinkedHashMap<String, DeviceFault> q = nodes.next();
            Iterator<DeviceFault> it = q.values().iterator();
            for (int i = 0; i < perNode && it.hasNext(); i++) {
                out.add(it.next());
                it.remove();
            }
            if (q.isEmpty()) {
                nodes.remove();
            }
        }
        return out;
    }

    public synchronized int size() {
        return pending.values().stream().mapToInt(Map::size).sum();
    }

    /** Faults folded into an identical waiting one. */
    public synchronized long folded() {
        return folded;
    }

    /** Faults dropped because their node had {@link #MAX_PENDING_PER_NODE} waiting. */
    public synchronized long dropped() {
        return dropped;
    }
}
