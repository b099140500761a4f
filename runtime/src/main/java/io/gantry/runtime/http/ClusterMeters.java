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
 *
 * <p>{@link #follow} keeps track of whether this instance reports, so that every owner of such series handles the
 * end of reporting the same way: the meters go, then the owner forgets whatever it kept for them.
 */
public final class ClusterMeters {
    private final MeterRegistry registry;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();
    /** Whether the reporter said so at the last {@link #follow}. */
    private boolean reporting;

    public ClusterMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Whether this instance reports the cluster now, as {@code reporter} says. When it did at the previous call and
     * no longer does, first removes every meter added from the registry, then runs {@code onStop} (the caller
     * clears its caches of those meters, and anything else it kept only while reporting): once per such change,
     * never when it goes on not reporting. Call it before registering a meter, so that the meters of a report are
     * always removed when it ends.
     */
    public synchronized boolean follow(ClusterReporter reporter, Runnable onStop) {
        boolean reports = reporter.reportsCluster();
        if (reporting && !reports) {
            removeAll();
            onStop.run();
        }
        reporting = reports;
        return reports;
    }

    /** Remembers {@code meter} (registered with {@link #registry()}), to be removed when reporting stops. */
    public <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    private void removeAll() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
    }
}
