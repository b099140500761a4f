package io.gantry.runtime.http;

import io.gantry.runtime.kafka.EventProcessor;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Who owns each unit of a service split into units (placement by pool, the queue by cohort tree): every instance
 * runs a processor per unit, and the HTTP side asks here which instance to add to or forward a request to. One unit:
 * not split, nothing to route (a standby forwards whole requests to the owner instead).
 */
public final class UnitOwners {
    private final String kind;
    private final List<String> names;
    private final List<EventProcessor> processors;

    /**
     * @param kind       what a unit is, for messages ({@code pool}, {@code shard})
     * @param names      each unit's name, in unit order
     * @param processors each unit's processor, in the same order
     */
    public UnitOwners(String kind, List<String> names, List<EventProcessor> processors) {
        if (names.size() != processors.size() || names.isEmpty()) {
            throw new IllegalArgumentException("one name per unit, at least one: " + names + " for "
                    + processors.size() + " processors");
        }
        this.kind = kind;
        this.names = List.copyOf(names);
        this.processors = List.copyOf(processors);
    }

    /** Whether the service is split into more than one unit. */
    public boolean split() {
        return processors.size() > 1;
    }

    /**
     * Split: the HTTP addresses of the instances owning the units this one does not (each once); empty when this
     * instance owns every unit, or the service is not split.
     *
     * @throws IllegalStateException naming the unit when one has no owner right now (a takeover under way)
     */
    public List<String> otherOwners() {
        if (!split()) {
            return List.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < processors.size(); i++) {
            ownerElsewhere(i).ifPresent(out::add);
        }
        return new ArrayList<>(out);
    }

    /**
     * Split: the HTTP address of the instance owning unit {@code name} when it is another one; empty when this
     * instance owns it (or the service is not split, or there is no such unit).
     *
     * @throws IllegalStateException naming the unit when it has no owner right now
     */
    public Optional<String> ownerOf(String name) {
        int i = names.indexOf(name);
        return !split() || i < 0 ? Optional.empty() : ownerElsewhere(i);
    }

    private Optional<String> ownerElsewhere(int i) {
        EventProcessor p = processors.get(i);
        if (p.isOwner()) {
            return Optional.empty();
        }
        String url = p.ownership().ownerUrl().orElse("");
        if (url.isEmpty() || url.equals(p.ownership().advertisedUrl())) {
            throw new IllegalStateException(kind + " " + names.get(i) + " has no owner right now");
        }
        return Optional.of(url);
    }

    /** This instance's HTTP address as the others reach it. */
    public String advertisedUrl() {
        return processors.get(0).ownership().advertisedUrl();
    }

    /**
     * Whether every unit is placed: owned here and restored, or owned by another instance (a standby of it ready).
     */
    public boolean allPlaced() {
        return processors.stream().allMatch(p -> p.isOwner()
                || p.isReady() && p.ownership().role() == io.gantry.runtime.kafka.Ownership.Role.STANDBY);
    }
}
