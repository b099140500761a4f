package io.gantry.runtime.http;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The meters of cluster-wide series, registered while this instance reports them ({@link ClusterReporter}) and
 * removed from the registry together when it stops: a series disappears from {@code /prometheus} rather than staying
 * at its last value (or 0) beside the figure the reporting instance exports. A meter registered again later starts
 * from zero, as a new process's would: Prometheus reads it as a counter reset.
 */
public final class ClusterMeters {
    private final MeterRegistry registry;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    public ClusterMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** Remembers {@code meter} (registered with {@link #registry()}) for {@link #removeAll}. */
    public <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    /** Removes every meter added since the last call from the registry. */
    public void removeAll() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
    }
}
