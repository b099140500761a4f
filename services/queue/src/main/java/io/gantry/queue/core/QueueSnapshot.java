package io.gantry.queue.core;

import java.time.Instant;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The immutable input of one dispatch cycle.
 *
 * @param now        the time of the input that triggered the cycle (for policies that age jobs; FIFO ignores it)
 * @param lastServed the tenant that got the most recent dispatch (the round-robin cursor), or null
 * @param tenants    every tenant with eligible jobs, by name
 */
public record QueueSnapshot(Instant now, String lastServed, SortedMap<String, TenantQueue> tenants) {
    public QueueSnapshot {
        tenants = Collections.unmodifiableSortedMap(new TreeMap<>(tenants));
    }
}
