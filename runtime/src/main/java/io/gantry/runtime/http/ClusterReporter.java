package io.gantry.runtime.http;

/**
 * A service whose instances share the work (admission, billing) but each hold the same view of the whole cluster
 * (a database every instance reads, the broker's consumer groups): the series describing that view are exported by
 * one instance only, the one this says, so that a sum over the instances Prometheus scrapes is the cluster's figure.
 * Series of an instance's own work (requests it served, records it handled) are exported by every instance.
 */
public interface ClusterReporter {
    /** Whether this instance exports the cluster-wide series now (see {@code EventProcessor#reportsCluster}). */
    boolean reportsCluster();
}
