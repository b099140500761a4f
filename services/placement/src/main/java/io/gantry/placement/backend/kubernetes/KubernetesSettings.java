package io.gantry.placement.backend.kubernetes;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How the Kubernetes backend renders pods and reads nodes ({@code gantry.placement.kubernetes.*}).
 *
 * @param namespace          where the pods, headless services and run-token secrets go
 * @param image              the container image of every task (a job spec names none)
 * @param graceSeconds       the termination grace period of a cancelled or preempted pod
 * @param gpuResource        the extended resource a whole GPU is requested as; blank: none requested
 * @param modelLabel         the node label with the GPU product (GPU feature discovery's)
 * @param memoryLabel        the node label with a GPU's memory in MiB
 * @param migLabel           the node label that says {@code true} when the GPUs can host MIG instances
 * @param rackLabel          the node label naming its rack (top-of-rack switch)
 * @param spineLabel         the node label naming its spine (aggregation switch / block)
 * @param topologyAnnotation the node annotation holding its {@code nvidia-smi topo -m} output
 * @param nodeSelector       a label selector for the nodes placement may use; blank: every node
 * @param masterPort         the rendezvous port of a gang (rank 0 listens on it)
 * @param apiUrl             the public API the tasks report to ({@code GANTRY_API_URL}); blank: none
 * @param createAttempts     how often a gang's creation is tried before the run is reported failed
 * @param retryBackoff       the first wait between attempts (doubling, at most 30 s)
 * @param resyncInterval     how often pods and nodes are listed again, whatever the watches said
 * @param imagePullTimeout   how long a container may fail to pull its image before the run fails
 * @param tolerationKey      the taint key every task pod tolerates (any value, any effect): the taint that keeps the
 *                           default scheduler off Gantry's nodes; blank: no toleration
 * @param foreignScanInterval how often every namespace's pods are listed for GPU pods Gantry did not create on
 *                           Gantry's nodes; zero: never
 * @param allowedHostPaths   the node directories (and what lies under them) a task may mount as a {@code hostPath}
 *                           volume; empty: none. A hostPath volume reaches the node itself (its container runtime's
 *                           socket, its root), so tenants get only what the operator lists
 */
public record KubernetesSettings(String namespace, String image, long graceSeconds, String gpuResource,
                                 String modelLabel, String memoryLabel, String migLabel, String rackLabel,
                                 String spineLabel, String topologyAnnotation, String nodeSelector, int masterPort,
                                 String apiUrl, int createAttempts, Duration retryBackoff, Duration resyncInterval,
                                 Duration imagePullTimeout, String tolerationKey, Duration foreignScanInterval,
                                 java.util.List<String> allowedHostPaths) {
    public static final String DEFAULT_NAMESPACE = "gantry";
    public static final String DEFAULT_IMAGE = "ubuntu:24.04";
    public static final String DEFAULT_TOLERATION_KEY = "gantry.io/dedicated";
    /** A label (and taint) key: an optional DNS-subdomain prefix and a name of at most 63 characters. */
    private static final Pattern QUALIFIED_NAME = Pattern.compile("([a-z0-9]([-a-z0-9]*[a-z0-9])?"
            + "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

    public KubernetesSettings {
        Objects.requireNonNull(namespace, "namespace");
        if (namespace.isBlank()) {
            throw new IllegalArgumentException("namespace must not be blank");
        }
        if (image == null || image.isBlank()) {
            throw new IllegalArgumentException("image must not be blank");
        }
        if (graceSeconds < 0) {
            throw new IllegalArgumentException("grace-seconds must be >= 0, was " + graceSeconds);
        }
        if (masterPort < 1 || masterPort > 65535) {
            throw new IllegalArgumentException("master-port must be 1..65535, was " + masterPort);
        }
        if (createAttempts < 1) {
            throw new IllegalArgumentException("create-attempts must be >= 1, was " + createAttempts);
        }
        if (retryBackoff.isNegative() || resyncInterval.isNegative() || resyncInterval.isZero()
                || imagePullTimeout.isNegative()) {
            throw new IllegalArgumentException("retry-backoff and image-pull-timeout must be >= 0, resync-interval > 0");
        }
        tolerationKey = tolerationKey == null ? "" : tolerationKey.trim();
        if (!tolerationKey.isEmpty() && !QUALIFIED_NAME.matcher(tolerationKey).matches()) {
            throw new IllegalArgumentException("toleration-key must be a taint key such as gantry.io/dedicated, was `"
                    + tolerationKey + "`");
        }
        if (foreignScanInterval == null || foreignScanInterval.isNegative()) {
            throw new IllegalArgumentException("foreign-scan-interval must be >= 0 (0: never), was " + foreignScanInterval);
        }
        gpuResource = gpuResource == null ? "" : gpuResource.trim();
        nodeSelector = nodeSelector == null ? "" : nodeSelector.trim();
        apiUrl = apiUrl == null ? "" : apiUrl.trim();
        allowedHostPaths = allowedHostPaths == null ? java.util.List.of() : allowedHostPaths.stream().map(String::trim)
                .filter(h -> !h.isEmpty()).map(h -> h.length() > 1 ? h.replaceAll("/+$", "") : h).toList();
        for (String h : allowedHostPaths) {
            if (!h.startsWith("/") || h.contains("/../") || h.endsWith("/..")) {
                throw new IllegalArgumentException("allowed-host-paths must be absolute directories, was `" + h + "`");
            }
        }
    }

    /** Whether a task may mount the node's {@code path}: it is one of {@link #allowedHostPaths} or under one. */
    public boolean hostPathAllowed(String path) {
        return allowedHostPaths.stream().anyMatch(a -> a.equals("/") || path.equals(a) || path.startsWith(a + "/"));
    }

    public KubernetesSettings withAllowedHostPaths(java.util.List<String> paths) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, imagePullTimeout, tolerationKey, foreignScanInterval, paths);
    }

    /** The defaults documented in the README. */
    public static KubernetesSettings defaults() {
        return new KubernetesSettings(DEFAULT_NAMESPACE, DEFAULT_IMAGE, 30, "nvidia.com/gpu", "nvidia.com/gpu.product",
                "nvidia.com/gpu.memory", "nvidia.com/mig.capable", "topology.gantry.io/rack",
                "topology.gantry.io/spine", "topology.gantry.io/nvidia-smi-topo", "", 29500, "", 5,
                Duration.ofMillis(500), Duration.ofSeconds(60), Duration.ofMinutes(10), DEFAULT_TOLERATION_KEY,
                Duration.ofSeconds(60), java.util.List.of());
    }

    public KubernetesSettings withNamespace(String ns) {
        return new KubernetesSettings(ns, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, imagePullTimeout, tolerationKey, foreignScanInterval, allowedHostPaths);
    }

    public KubernetesSettings withRetries(int attempts, Duration backoff) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, attempts, backoff,
                resyncInterval, imagePullTimeout, tolerationKey, foreignScanInterval, allowedHostPaths);
    }

    public KubernetesSettings withResyncInterval(Duration interval) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, interval, imagePullTimeout, tolerationKey, foreignScanInterval, allowedHostPaths);
    }

    public KubernetesSettings withImagePullTimeout(Duration timeout) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, timeout, tolerationKey, foreignScanInterval, allowedHostPaths);
    }

    public KubernetesSettings withForeignScanInterval(Duration interval) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, imagePullTimeout, tolerationKey, interval, allowedHostPaths);
    }

    public KubernetesSettings withTolerationKey(String key) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, nodeSelector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, imagePullTimeout, key, foreignScanInterval, allowedHostPaths);
    }

    public KubernetesSettings withNodeSelector(String selector) {
        return new KubernetesSettings(namespace, image, graceSeconds, gpuResource, modelLabel, memoryLabel, migLabel,
                rackLabel, spineLabel, topologyAnnotation, selector, masterPort, apiUrl, createAttempts,
                retryBackoff, resyncInterval, imagePullTimeout, tolerationKey, foreignScanInterval, allowedHostPaths);
    }
}
