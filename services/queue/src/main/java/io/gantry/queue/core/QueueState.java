package io.gantry.queue.core;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A copy of a core's whole state, comparable with {@code equals}: two cores that replayed the same facts have equal
 * states.
 *
 * @param usage per queue, the amount in use of every resource (GPU flavours, cpu, memory), in configuration order
 */
public record QueueState(SortedMap<String, QueuedJob> live, SortedMap<String, FinishedJob> finished,
                         SortedSet<String> tenants, Map<String, List<Long>> usage) {
    public QueueState {
        live = Collections.unmodifiableSortedMap(new TreeMap<>(live));
        finished = Collections.unmodifiableSortedMap(new TreeMap<>(finished));
        tenants = Collections.unmodifiableSortedSet(new TreeSet<>(tenants));
        usage = Collections.unmodifiableMap(new TreeMap<>(usage));
    }
}
