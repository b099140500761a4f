package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.SuccessRule;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.NodeSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs each task as a pod bound to the node placement chose, on a Kubernetes cluster whose scheduler never sees
 * them ({@code nodeName}). Gantry stays the only scheduler; Kubernetes runs the containers, accounts the devices
 * and reports what happened.
 *
 * <p><b>Threads.</b> The event loop only reads and enqueues: every API call (create, delete, list) runs on one
 * worker thread of this backend (the foreign-pod scan on a second one), and the watches run on fabric8's threads.
 * Both hand what they learn to the loop through a queue drained in {@link #poll}, so an API server that is down or
 * slow never blocks placement.
 *
 * <p><b>A gang</b> is created together (secret, headless service, then every pod). A failed creation is retried
 * with doubling backoff; a refusal (e.g. 422, 403) or the last attempt deletes whatever was created and reports the
 * run failed with the API's reason. Pod names derive from the allocation id, so a repeated creation finds the pod
 * already there instead of making a second one.
 *
 * <p><b>Outcomes.</b> All pods {@code Succeeded}, or all of the leader group's under a success policy
 * ({@link SuccessRule}; the rest are deleted with the run): success. A pod {@code Failed} (its container's exit code, or the
 * kubelet's reason when it refused the pod), a container that can never start (bad image name, missing config), or
 * a pod that disappears (deleted, evicted, its node removed): failure. Pods are watched, and listed again after a
 * watch closes and every resync interval, so nothing is missed across dropped connections.
 *
 * <p><b>Nodes</b> are watched too: a node heartbeats while its {@code Ready} condition is {@code True}; NotReady or
 * Unknown stops its heartbeats, which recovery turns into {@code NodeFailed}.
 *
 * <p><b>One entrance.</b> Every {@code foreignScanInterval} the pods of all namespaces are listed: a pod bound to one
 * of Gantry's nodes, pending or running, requesting GPUs (the GPU resource or a MIG instance), that is not one of
 * Gantry's (its namespace and managed-by label) holds devices placement counts free. Each is logged once and counted
 * ({@link #foreignPods}, the gauges of {@link KubernetesMetrics}); Gantry never deletes it. Gantry's nodes should
 * carry the taint {@code tolerationKey} (which Gantry's pods tolerate) so the default scheduler leaves them alone; a
 * node without it is warned about once.
 *
 * <p><b>Restarts.</b> Pods outlive placement. {@link #adopt} lists them again: a live run's pods are followed
 * on (never created a second time), a live run with missing pods fails (the gang is incomplete; the rest is
 * deleted), and pods of no live run are deleted.
 */
public final class KubernetesBackend implements ExecutionBackend {
    public static final String NAME = "kubernetes";
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesBackend.class);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /** Container states a pod never recovers from with {@code restartPolicy: Never}. */
    private static final Set<String> FATAL_WAITING = Set.of("InvalidImageName", "ErrImageNeverPull",
            "CreateContainerConfigError", "CreateContainerError");
    /** Container states that may clear up (a registry outage) but fail the run after the image-pull timeout. */
    private static final Set<String> PULLING = Set.of("ErrImagePull", "ImagePullBackOff");
    /** Page size of the all-namespaces pod list (a big cluster's pods come in pages, not one answer). */
    private static final long FOREIGN_PAGE = 500;

    /**
     * A pod Gantry did not create, pending or running on one of Gantry's nodes with GPUs: devices taken outside the
     * one entrance. {@code gpus} counts whole GPUs and MIG instances alike.
     */
    public record ForeignPod(String namespace, String name, String node, String phase, int gpus) {
    }

    private final KubernetesClient client;
    private final KubernetesSettings settings;
    private final ScheduledExecutorService api;
    /** The foreign-pod scan: its own thread, so listing a big cluster's pods never delays a gang's creation. */
    private final ScheduledExecutorService scanner;
    private final ConcurrentLinkedQueue<Signal> inbox = new ConcurrentLinkedQueue<>();
    private final Map<String, Node> nodes = new ConcurrentHashMap<>();
    private final Set<String> badNodes = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private volatile Watch podWatch;
    private volatile Watch nodeWatch;
    /** Failed lists in a row (worker thread): one retry chain each, with a growing wait, one warning per outage. */
    private int podListFailures;
    private int nodeListFailures;
    private boolean podRetryPending;
    private boolean nodeRetryPending;
    private volatile List<ForeignPod> foreign = List.of();
    /** Foreign pods already logged (namespace/name/uid; scan thread), so each is warned about once. */
    private final Set<String> foreignSeen = new HashSet<>();
    private int foreignScanFailures;
    private final AtomicLong foreignScans = new AtomicLong();
    /** Nodes already warned about for lacking the dedicated taint (worker thread). */
    private final Set<String> untainted = new HashSet<>();

    // touched on the loop thread only
    private final Map<String, Run> runs = new HashMap<>();
    /** Outcomes handed to the loop whose release is not confirmed yet; offered again if the loop restarts. */
    private final Map<String, RunOutcome> reported = new HashMap<>();
    /** Runs adopted after a restart whose pods have not been listed yet. */
    private final Set<String> adopting = new HashSet<>();

    /** What the watches and the worker tell the loop. */
    private sealed interface Signal {
    }

    private record PodSeen(Pod pod) implements Signal {
    }

    private record PodGone(Pod pod) implements Signal {
    }

    /** Every managed pod, as one list call returned them. */
    private record PodsListed(List<Pod> pods) implements Signal {
    }

    private record Created(Run run) implements Signal {
    }

    private record CreateFailed(Run run, String reason) implements Signal {
    }

    /** One run's pods as the loop knows them. {@code creating} / {@code cancelled} are read by the worker. */
    private static final class Run {
        final Allocation allocation;
        final GangManifest manifest;
        /** The task group deciding success ({@link SuccessRule}), or null for every task. */
        final String leader;
        final Map<String, Pod> pods = new LinkedHashMap<>();
        /** Since when each pod has been failing to pull its image. */
        final Map<String, Instant> pullingSince = new HashMap<>();
        volatile boolean creating;
        volatile boolean cancelled;
        boolean terminating;
        boolean over;

        Run(Allocation allocation, GangManifest manifest, boolean creating, String leader) {
            this.allocation = allocation;
            this.manifest = manifest;
            this.creating = creating;
            this.leader = leader;
        }

        String id() {
            return allocation.allocationId();
        }

        Set<String> podNames() {
            Set<String> names = new java.util.LinkedHashSet<>();
            allocation.placements().forEach(p -> names.add(GangManifest.podName(id(), p.task(), p.replica())));
            return names;
        }
    }

    public KubernetesBackend(KubernetesClient client, KubernetesSettings settings) {
        this.client = client;
        this.settings = settings;
        this.api = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gantry-kubernetes-api");
            t.setDaemon(true);
            return t;
        });
        this.scanner = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gantry-kubernetes-scan");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Lists nodes and pods and starts the watches; waits at most {@code timeout} for the first node list (at
     * service start, before the event loop runs), so the nodes can be registered. If the API does not answer,
     * placement starts without nodes and the worker keeps trying.
     */
    public KubernetesBackend start(Duration timeout) {
        try {
            api.submit(this::syncNodes).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warn("the Kubernetes API did not list the nodes within {} ({}); starting without them", timeout,
                    rootMessage(e));
        }
        api.execute(this::syncPods);
        long resync = settings.resyncInterval().toMillis();
        api.scheduleWithFixedDelay(this::resync, resync, resync, TimeUnit.MILLISECONDS);
        long scan = settings.foreignScanInterval().toMillis();
        if (scan > 0) {
            scanner.scheduleWithFixedDelay(this::scanForeignPods, 0, scan, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    @Override
    public String name() {
        return NAME;
    }

    public KubernetesSettings settings() {
        return settings;
    }

    @Override
    public List<NodeSpec> nodes() {
        List<NodeSpec> out = new ArrayList<>();
        for (Node n : nodes.values()) {
            try {
                out.add(NodeInventory.spec(n, NAME, settings));
                badNodes.remove(n.getMetadata().getName());
            } catch (IllegalArgumentException e) {
                if (badNodes.add(n.getMetadata().getName())) {
                    LOG.warn("node {} is not registered: {}", n.getMetadata().getName(), e.getMessage());
                }
            }
        }
        out.sort(Comparator.comparing(NodeSpec::nodeId));
        return out;
    }

    /** Pods of others holding GPUs on Gantry's nodes, as the last scan found them (any thread). */
    public List<ForeignPod> foreignPods() {
        return foreign;
    }

    /**
     * The foreign pods summed per node; empty until the first scan completed (then placement keeps what it recorded
     * before the start), none at all when scanning is off.
     */
    @Override
    public Optional<Map<String, ForeignLoad>> foreignLoad() {
        if (settings.foreignScanInterval().isZero()) {
            return Optional.of(Map.of());
        }
        if (foreignScans.get() == 0) {
            return Optional.empty();
        }
        ForeignLoad.Tally tally = new ForeignLoad.Tally();
        foreign.forEach(p -> tally.add(p.node(), p.gpus(), "pod " + p.namespace() + "/" + p.name()));
        return Optional.of(tally.build());
    }

    @Override
    public boolean heartbeating(String nodeId) {
        Node n = nodes.get(nodeId);
        return n != null && NodeInventory.ready(n);
    }

    // ---------------------------------------------------------------- loop thread

    @Override
    public Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now) {
        GangManifest manifest;
        try {
            manifest = GangManifest.render(allocation, plan, settings);
        } catch (RuntimeException e) {
            return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                    "could not describe the pods: " + e.getMessage(), now));
        }
        Run previous = runs.get(allocation.allocationId());
        if (previous != null) {
            previous.cancelled = true;
        }
        Run run = new Run(allocation, manifest, true, plan.successLeader());
        runs.put(run.id(), run);
        reported.remove(run.id());
        api.execute(() -> create(run, 1));
        return Optional.empty();
    }

    /**
     * Sets the preemption notice on the run's pods (annotation {@code gantry.io/preemption-notice}, which the
     * containers see as {@code GANTRY_PREEMPTION_NOTICE} once the kubelet refreshes the downward API file; the API
     * answers at once). Queued before the deletion {@link #terminate} asks for; one try (the API is the record).
     */
    @Override
    public void notice(String allocationId, io.gantry.placement.backend.PreemptionNotice notice) {
        Run run = runs.get(allocationId);
        if (run == null || run.over || run.terminating) {
            return;
        }
        String json = notice.json().strip();
        api.execute(() -> {
            try {
                for (var pod : client.pods().inNamespace(settings.namespace())
                        .withLabel(GangManifest.ALLOCATION, allocationId).list().getItems()) {
                    client.pods().inNamespace(settings.namespace()).withName(pod.getMetadata().getName())
                            .edit(p -> new io.fabric8.kubernetes.api.model.PodBuilder(p).editMetadata()
                                    .addToAnnotations(GangManifest.PREEMPTION_ANNOTATION, json).endMetadata().build());
                }
            } catch (KubernetesClientException e) {
                LOG.warn("could not annotate the pods of run {} with its preemption notice: {}", allocationId,
                        e.getMessage());
            }
        });
    }

    /** Deletes the pods with the grace period: the containers get SIGTERM and the grace period to checkpoint. */
    @Override
    public void terminate(String allocationId) {
        Run run = runs.get(allocationId);
        if (run == null || run.over || run.terminating) {
            return;
        }
        run.terminating = true;
        api.execute(() -> deletePods(allocationId, settings.graceSeconds(), 1));
    }

    /** Deletes the run's pods (with the grace period; at once after a preemption's grace ran out), service, secret. */
    @Override
    public void stop(String allocationId) {
        reported.remove(allocationId);
        Run run = runs.remove(allocationId);
        if (run != null) {
            run.cancelled = true;
        }
        long grace = run != null && run.terminating ? 0 : settings.graceSeconds();
        api.execute(() -> deleteRun(allocationId, grace, 1));
    }

    @Override
    public List<RunOutcome> poll(Instant now) {
        List<RunOutcome> out = new ArrayList<>();
        Signal s;
        while ((s = inbox.poll()) != null) {
            if (s instanceof PodSeen seen) {
                Run run = runOf(seen.pod());
                if (run != null && !run.over) {
                    run.pods.put(seen.pod().getMetadata().getName(), seen.pod());
                    judge(run, now).ifPresent(out::add);
                }
            } else if (s instanceof PodGone gone) {
                Run run = runOf(gone.pod());
                if (run != null && !run.over && !run.creating) {
                    out.add(end(run, RunOutcome.failed(run.id(), exitCode(gone.pod()), "pod "
                            + gone.pod().getMetadata().getName() + " on node " + gone.pod().getSpec().getNodeName()
                            + " was deleted before it finished" + (run.terminating ? " (terminated)" : ""), now)));
                }
            } else if (s instanceof PodsListed list) {
                out.addAll(reconcile(list.pods(), now));
            } else if (s instanceof Created c) {
                c.run().creating = false;
            } else if (s instanceof CreateFailed f) {
                Run run = runs.get(f.run().id());
                if (run == f.run() && !run.over) {
                    run.creating = false;
                    out.add(end(run, RunOutcome.failed(run.id(), null, f.reason(), now)));
                }
            }
        }
        return out;
    }

    private RunOutcome end(Run run, RunOutcome outcome) {
        run.over = true;
        reported.put(run.id(), outcome);
        return outcome;
    }

    private Run runOf(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        return labels == null ? null : runs.get(labels.get(GangManifest.ALLOCATION));
    }

    /**
     * The run's outcome once its pods say so: any failed pod fails it; by the {@link SuccessRule} all succeeded, or
     * all of the leader group's, make it a success (placement then releases the run and {@link #stop} deletes the
     * pods still running).
     */
    private Optional<RunOutcome> judge(Run run, Instant now) {
        Set<String> names = run.podNames();
        Map<SuccessRule.Replica, Boolean> ended = new HashMap<>();
        for (PlacedTask p : run.allocation.placements()) {
            Pod pod = run.pods.get(GangManifest.podName(run.id(), p.task(), p.replica()));
            if (pod != null && pod.getStatus() != null && "Succeeded".equals(pod.getStatus().getPhase())) {
                ended.put(SuccessRule.Replica.of(p), true);
            }
        }
        for (String name : names) {
            Pod pod = run.pods.get(name);
            if (pod == null || pod.getStatus() == null) {
                continue;
            }
            String phase = pod.getStatus().getPhase();
            if ("Failed".equals(phase)) {
                return Optional.of(end(run, RunOutcome.failed(run.id(), exitCode(pod), failure(pod), now)));
            }
            String fatal = waiting(pod, FATAL_WAITING);
            if (fatal != null) {
                return Optional.of(end(run, RunOutcome.failed(run.id(), null, "pod " + name + " on node "
                        + pod.getSpec().getNodeName() + " cannot start: " + fatal, now)));
            }
            String pulling = waiting(pod, PULLING);
            if (pulling == null) {
                run.pullingSince.remove(name);
            } else if (!now.isBefore(run.pullingSince.computeIfAbsent(name, k -> now).plus(settings.imagePullTimeout()))) {
                return Optional.of(end(run, RunOutcome.failed(run.id(), null, "pod " + name + " on node "
                        + pod.getSpec().getNodeName() + " could not pull its image for "
                        + settings.imagePullTimeout().toSeconds() + " s: " + pulling, now)));
            }
        }
        if (SuccessRule.judge(run.allocation.placements(), run.leader, ended) == SuccessRule.Verdict.SUCCEEDED) {
            return Optional.of(end(run, RunOutcome.succeeded(run.id(), now)));
        }
        return Optional.empty();
    }

    /**
     * A fresh list of every managed pod: follows the pods of known runs, fails a run whose pod is gone (unless its
     * creation is still under way), settles runs adopted after a restart, and deletes pods of no run.
     */
    private List<RunOutcome> reconcile(List<Pod> pods, Instant now) {
        Map<String, Map<String, Pod>> byRun = new HashMap<>();
        Set<String> orphans = new HashSet<>();
        for (Pod p : pods) {
            Map<String, String> labels = p.getMetadata().getLabels();
            String id = labels == null ? null : labels.get(GangManifest.ALLOCATION);
            if (id == null) {
                continue;
            }
            if (runs.containsKey(id)) {
                byRun.computeIfAbsent(id, k -> new HashMap<>()).put(p.getMetadata().getName(), p);
            } else if (p.getMetadata().getDeletionTimestamp() == null) {
                orphans.add(id);
            }
        }
        for (String id : orphans) {
            LOG.info("deleting the pods of allocation {}: placement holds no such run", id);
            api.execute(() -> deleteRun(id, settings.graceSeconds(), 1));
        }
        List<RunOutcome> out = new ArrayList<>();
        for (Run run : List.copyOf(runs.values())) {
            if (run.over || run.creating) {
                continue;
            }
            Map<String, Pod> found = byRun.getOrDefault(run.id(), Map.of());
            Set<String> missing = new java.util.TreeSet<>(run.podNames());
            missing.removeAll(found.keySet());
            boolean adopted = adopting.remove(run.id());
            if (!missing.isEmpty()) {
                String why = adopted && found.isEmpty()
                        ? "placement restarted before the run's pods were created"
                        : "pod " + String.join(", ", missing) + " disappeared (deleted, evicted or its node removed)";
                if (adopted && !found.isEmpty()) {
                    why = "placement restarted with the gang incomplete: pod " + String.join(", ", missing)
                            + " missing";
                }
                out.add(end(run, RunOutcome.failed(run.id(), null, why, now)));
                continue;
            }
            run.pods.putAll(found);
            judge(run, now).ifPresent(out::add);
        }
        return out;
    }

    @Override
    public List<RunOutcome> adopt(List<LiveRun> live, Instant now) {
        Map<String, Allocation> byId = ExecutionBackend.liveById(live, runs.keySet(), this::stop);
        reported.keySet().removeIf(id -> !byId.containsKey(id));
        List<RunOutcome> out = new ArrayList<>();
        Map<String, String> leaders = new HashMap<>();
        live.forEach(l -> {
            if (l.plan() != null && l.plan().successLeader() != null) {
                leaders.put(l.allocation().allocationId(), l.plan().successLeader());
            }
        });
        for (Allocation a : byId.values()) {
            if (!NAME.equals(a.backend())) {
                out.add(RunOutcome.failed(a.allocationId(), null, "placement restarted with the kubernetes backend; "
                        + "the " + a.backend() + " run was lost", now));
            } else if (!runs.containsKey(a.allocationId())) {
                Run run = new Run(a, null, false, leaders.get(a.allocationId()));
                runs.put(a.allocationId(), run);
                adopting.add(a.allocationId());
            }
        }
        out.addAll(reported.values());
        api.execute(this::syncPods);
        return out;
    }

    // ---------------------------------------------------------------- worker thread

    /** Creates the run's objects; retries what the API did not take, gives up (deleting all) after the last try. */
    private void create(Run run, int attempt) {
        if (run.cancelled || closed) {
            return;
        }
        GangManifest m = run.manifest;
        String what = "the run's objects";
        try {
            if (m.secret() != null) {
                what = "secret " + m.secret().getMetadata().getName();
                createIfAbsent(() -> client.secrets().inNamespace(settings.namespace()).resource(m.secret()).create(),
                        () -> client.secrets().inNamespace(settings.namespace()).withName(m.secret().getMetadata()
                                .getName()).get() != null);
            }
            what = "service " + m.service().getMetadata().getName();
            createIfAbsent(() -> client.services().inNamespace(settings.namespace()).resource(m.service()).create(),
                    () -> client.services().inNamespace(settings.namespace()).withName(m.service().getMetadata()
                            .getName()).get() != null);
            for (Pod pod : m.pods()) {
                if (run.cancelled) {
                    return;
                }
                what = "pod " + pod.getMetadata().getName() + " on node " + pod.getSpec().getNodeName();
                createPod(run, pod);
            }
            inbox.add(new Created(run));
        } catch (KubernetesClientException e) {
            if (closed) {
                return; // interrupted by close(): a restarted placement adopts or deletes what exists
            }
            String reason = "could not create " + what + ": " + apiReason(e);
            if (retryable(e) && attempt < settings.createAttempts() && !closed) {
                long wait = backoff(attempt);
                LOG.warn("{} (attempt {} of {}); trying again in {} ms", reason, attempt, settings.createAttempts(), wait);
                api.schedule(() -> create(run, attempt + 1), wait, TimeUnit.MILLISECONDS);
                return;
            }
            LOG.warn("{}; giving up after {} attempt(s) and deleting the gang (code {})", reason, attempt, e.getCode());
            deleteRun(run.id(), 0, 1);
            inbox.add(new CreateFailed(run, reason + (attempt > 1 ? " (after " + attempt + " attempts)" : "")));
        } catch (RuntimeException e) {
            LOG.warn("could not create {} of allocation {}", what, run.id(), e);
            deleteRun(run.id(), 0, 1);
            inbox.add(new CreateFailed(run, "could not create " + what + ": " + rootMessage(e)));
        }
    }

    private void createIfAbsent(Runnable create, java.util.function.BooleanSupplier exists) {
        try {
            create.run();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409 || !exists.getAsBoolean()) {
                throw e;
            }
        }
    }

    /** A pod already there (an earlier attempt, or before a restart) is kept when it is this run's on the same node. */
    private void createPod(Run run, Pod pod) {
        var resource = client.pods().inNamespace(settings.namespace()).resource(pod);
        try {
            resource.create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            Pod existing = client.pods().inNamespace(settings.namespace()).withName(pod.getMetadata().getName()).get();
            if (existing == null || existing.getMetadata().getDeletionTimestamp() != null) {
                throw e; // going away: the next attempt creates it
            }
            Map<String, String> labels = existing.getMetadata().getLabels();
            String owner = labels == null ? null : labels.get(GangManifest.ALLOCATION);
            if (!run.id().equals(owner)) {
                // never touch what is not this run's: refuse instead (not retried)
                throw new KubernetesClientException("the name is taken by " + (owner == null
                        ? "a pod placement does not manage" : "allocation " + owner), 422, null);
            }
            if (pod.getSpec().getNodeName().equals(existing.getSpec().getNodeName())) {
                return;
            }
            // the same run placed elsewhere (a grant that was never committed, decided again): replace it
            client.pods().inNamespace(settings.namespace()).withName(pod.getMetadata().getName())
                    .withGracePeriod(0).delete();
            throw e;
        }
    }

    private void deletePods(String allocationId, long grace, int attempt) {
        try {
            client.pods().inNamespace(settings.namespace()).withLabel(GangManifest.ALLOCATION, allocationId)
                    .withGracePeriod(grace).delete();
        } catch (KubernetesClientException e) {
            retryDelete(allocationId, attempt, e, () -> deletePods(allocationId, grace, attempt + 1));
        }
    }

    private void deleteRun(String allocationId, long grace, int attempt) {
        try {
            String ns = settings.namespace();
            client.pods().inNamespace(ns).withLabel(GangManifest.ALLOCATION, allocationId).withGracePeriod(grace).delete();
            client.services().inNamespace(ns).withLabel(GangManifest.ALLOCATION, allocationId).delete();
            client.secrets().inNamespace(ns).withLabel(GangManifest.ALLOCATION, allocationId).delete();
        } catch (KubernetesClientException e) {
            retryDelete(allocationId, attempt, e, () -> deleteRun(allocationId, grace, attempt + 1));
        }
    }

    /** Deleting is retried until it works (an orphan holds GPUs); the resync deletes what is left anyway. */
    private void retryDelete(String allocationId, int attempt, KubernetesClientException e, Runnable again) {
        if (closed) {
            return;
        }
        long wait = backoff(attempt);
        LOG.warn("could not delete the pods of allocation {}: {}; trying again in {} ms", allocationId, apiReason(e), wait);
        api.schedule(again, wait, TimeUnit.MILLISECONDS);
    }

    private void resync() {
        syncNodes();
        syncPods();
    }

    /** Lists every managed pod (handed to the loop whole) and watches them from there; retried until it works. */
    private void syncPods() {
        if (closed) {
            return;
        }
        try {
            PodList list = client.pods().inNamespace(settings.namespace())
                    .withLabel(GangManifest.MANAGED_BY, GangManifest.MANAGER).list();
            if (podListFailures > 0) {
                LOG.info("the pods are listed again after {} failed attempt(s)", podListFailures);
            }
            podListFailures = 0;
            inbox.add(new PodsListed(list.getItems()));
            if (podWatch == null) {
                podWatch = client.pods().inNamespace(settings.namespace())
                        .withLabel(GangManifest.MANAGED_BY, GangManifest.MANAGER)
                        .watch(new ListOptionsBuilder().withResourceVersion(list.getMetadata().getResourceVersion())
                                .build(), new PodWatcher());
            }
        } catch (KubernetesClientException e) {
            if (closed) {
                return; // interrupted by close()
            }
            if (podListFailures++ == 0) {
                LOG.warn("could not list the pods: {}; trying again until it works", apiReason(e));
            }
            if (!podRetryPending) {
                podRetryPending = true;
                api.schedule(() -> {
                    podRetryPending = false;
                    syncPods();
                }, backoff(podListFailures), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void syncNodes() {
        if (closed) {
            return;
        }
        try {
            NodeList list = settings.nodeSelector().isEmpty() ? client.nodes().list()
                    : client.nodes().withLabelSelector(settings.nodeSelector()).list();
            if (nodeListFailures > 0) {
                LOG.info("the nodes are listed again after {} failed attempt(s)", nodeListFailures);
            }
            nodeListFailures = 0;
            Map<String, Node> fresh = new HashMap<>();
            list.getItems().forEach(n -> fresh.put(n.getMetadata().getName(), n));
            nodes.keySet().retainAll(fresh.keySet());
            nodes.putAll(fresh);
            warnUntainted(list.getItems());
            if (nodeWatch == null) {
                var op = settings.nodeSelector().isEmpty() ? client.nodes()
                        : client.nodes().withLabelSelector(settings.nodeSelector());
                nodeWatch = op.watch(new ListOptionsBuilder().withResourceVersion(list.getMetadata().getResourceVersion())
                        .build(), new NodeWatcher());
            }
        } catch (KubernetesClientException e) {
            if (closed) {
                return; // interrupted by close()
            }
            if (nodeListFailures++ == 0) {
                LOG.warn("could not list the nodes: {}; trying again until it works", apiReason(e));
            }
            if (!nodeRetryPending) {
                nodeRetryPending = true;
                api.schedule(() -> {
                    nodeRetryPending = false;
                    syncNodes();
                }, backoff(nodeListFailures), TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Once per node: without the dedicated taint the default scheduler may put other pods on it. */
    private void warnUntainted(List<Node> listed) {
        String key = settings.tolerationKey();
        if (key.isEmpty()) {
            return;
        }
        Set<String> names = new HashSet<>();
        for (Node n : listed) {
            String name = n.getMetadata().getName();
            names.add(name);
            boolean tainted = n.getSpec() != null && n.getSpec().getTaints() != null
                    && n.getSpec().getTaints().stream().anyMatch(t -> key.equals(t.getKey()));
            if (tainted) {
                untainted.remove(name);
            } else if (untainted.add(name)) {
                LOG.warn("node {} has no taint {}: the default scheduler may place other pods on it (kubectl taint "
                        + "node {} {}=true:NoSchedule)", name, key, name, key);
            }
        }
        untainted.retainAll(names);
    }

    /**
     * Lists the pods of every namespace, page by page, for pods of others holding GPUs on Gantry's nodes. When the
     * list fails the last answer stands (an API outage is not a change on the nodes), with one warning per outage.
     */
    private void scanForeignPods() {
        if (closed) {
            return;
        }
        // only what is foreign is kept from each page: a big cluster's pods never sit in memory at once
        Map<String, ForeignPod> found = new LinkedHashMap<>();
        try {
            String next = null;
            do {
                PodList page = client.pods().inAnyNamespace()
                        .list(new ListOptionsBuilder().withLimit(FOREIGN_PAGE).withContinue(next).build());
                for (Pod p : page.getItems()) {
                    ForeignPod f = foreign(p);
                    if (f != null) {
                        found.put(f.namespace() + "/" + f.name() + "/" + p.getMetadata().getUid(), f);
                    }
                }
                next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
            } while (next != null && !next.isEmpty() && !closed);
        } catch (KubernetesClientException e) {
            if (!closed && foreignScanFailures++ == 0) {
                LOG.warn("could not list the pods of all namespaces for foreign GPU pods on Gantry's nodes: {}; "
                        + "trying again every {} (the RBAC needs list on pods cluster-wide)", apiReason(e),
                        settings.foreignScanInterval());
            }
            return;
        }
        foreignScanFailures = 0;
        found.forEach((id, f) -> {
            if (foreignSeen.add(id)) {
                // names and counts only: a pod's spec may carry secrets in its environment
                LOG.warn("pod {}/{} ({}) on Gantry node {} requests {} GPU(s) and was not created by Gantry: "
                        + "capacity taken outside Gantry", f.namespace(), f.name(), f.phase(), f.node(), f.gpus());
            }
        });
        foreignSeen.retainAll(found.keySet());
        List<ForeignPod> sorted = new ArrayList<>(found.values());
        sorted.sort(Comparator.comparing(ForeignPod::node).thenComparing(ForeignPod::namespace)
                .thenComparing(ForeignPod::name));
        foreign = List.copyOf(sorted);
        foreignScans.incrementAndGet();
    }

    /** Scans for foreign pods that completed (tests: wait for a scan instead of for time). */
    long foreignScans() {
        return foreignScans.get();
    }

    /** The pod as a foreign pod, or null when it is Gantry's, on no Gantry node, finished, or has no GPUs. */
    private ForeignPod foreign(Pod p) {
        if (p.getSpec() == null || p.getSpec().getNodeName() == null || !nodes.containsKey(p.getSpec().getNodeName())) {
            return null;
        }
        Map<String, String> labels = p.getMetadata().getLabels();
        boolean ours = settings.namespace().equals(p.getMetadata().getNamespace()) && labels != null
                && GangManifest.MANAGER.equals(labels.get(GangManifest.MANAGED_BY));
        String phase = p.getStatus() == null || p.getStatus().getPhase() == null ? "Pending" : p.getStatus().getPhase();
        if (ours || !("Pending".equals(phase) || "Running".equals(phase))) {
            return null;
        }
        int gpus = gpuRequest(p, settings.gpuResource());
        return gpus <= 0 ? null
                : new ForeignPod(p.getMetadata().getNamespace(), p.getMetadata().getName(), p.getSpec().getNodeName(),
                phase, gpus);
    }

    /**
     * GPUs and MIG instances the pod holds, counted as the kubelet does: the app containers (and sidecars, init
     * containers that keep running) together, or the largest other init container if that is more. Requests, else
     * limits (an extended resource's request defaults to its limit).
     */
    static int gpuRequest(Pod p, String gpuResource) {
        int apps = 0;
        for (Container c : p.getSpec().getContainers() == null ? List.<Container>of() : p.getSpec().getContainers()) {
            apps += gpus(c, gpuResource);
        }
        int init = 0;
        List<Container> inits = p.getSpec().getInitContainers() == null ? List.of() : p.getSpec().getInitContainers();
        for (Container c : inits) {
            if ("Always".equals(c.getRestartPolicy())) {
                apps += gpus(c, gpuResource);
            } else {
                init = Math.max(init, gpus(c, gpuResource));
            }
        }
        return Math.max(apps, init);
    }

    private static int gpus(Container c, String gpuResource) {
        if (c.getResources() == null) {
            return 0;
        }
        Map<String, Quantity> requests = new HashMap<>();
        if (c.getResources().getLimits() != null) {
            requests.putAll(c.getResources().getLimits());
        }
        if (c.getResources().getRequests() != null) {
            requests.putAll(c.getResources().getRequests());
        }
        int n = 0;
        for (var e : requests.entrySet()) {
            String key = e.getKey();
            boolean gpu = key.equals(gpuResource) || key.equals("nvidia.com/gpu")
                    || (key.contains("/mig-") && !key.endsWith("/mig-"));
            if (gpu && e.getValue() != null) {
                try {
                    n += Quantity.getAmountInBytes(e.getValue()).intValue();
                } catch (IllegalArgumentException ex) {
                    // a quantity the API server would not have taken: nothing to count
                }
            }
        }
        return n;
    }

    private final class PodWatcher implements Watcher<Pod> {
        @Override
        public void eventReceived(Action action, Pod pod) {
            switch (action) {
                case ADDED, MODIFIED -> inbox.add(new PodSeen(pod));
                case DELETED -> inbox.add(new PodGone(pod));
                default -> {
                }
            }
        }

        /** The watch gave up (e.g. 410 Gone): list again and watch from there, so nothing in between is lost. */
        @Override
        public void onClose(WatcherException cause) {
            podWatch = null;
            if (!closed) {
                LOG.info("the pod watch closed ({}); listing again", cause.getMessage());
                api.schedule(KubernetesBackend.this::syncPods, settings.retryBackoff().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private final class NodeWatcher implements Watcher<Node> {
        @Override
        public void eventReceived(Action action, Node node) {
            switch (action) {
                case ADDED, MODIFIED -> nodes.put(node.getMetadata().getName(), node);
                case DELETED -> nodes.remove(node.getMetadata().getName());
                default -> {
                }
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            nodeWatch = null;
            if (!closed) {
                LOG.info("the node watch closed ({}); listing again", cause.getMessage());
                api.schedule(KubernetesBackend.this::syncNodes, settings.retryBackoff().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private long backoff(int attempt) {
        long first = Math.max(1, settings.retryBackoff().toMillis());
        long wait = first << Math.min(20, attempt - 1);
        return Math.min(wait, MAX_BACKOFF.toMillis());
    }

    /** Worth another try: no answer, throttled, a server error, or a name conflict being replaced. */
    static boolean retryable(KubernetesClientException e) {
        int code = e.getCode();
        return code < 100 || code == 409 || code == 429 || code >= 500;
    }

    /** The API's status message and code; never the request (it may carry the run's secret). */
    static String apiReason(KubernetesClientException e) {
        if (e.getStatus() != null && e.getStatus().getMessage() != null) {
            return e.getStatus().getMessage() + " (HTTP " + e.getCode() + ")";
        }
        if (e.getCode() > 0) {
            return (e.getMessage() == null ? "" : e.getMessage() + " ") + "(HTTP " + e.getCode() + ")";
        }
        return "no answer from the API server (" + rootMessage(e) + ")";
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    private static Integer exitCode(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        Integer any = null;
        for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
            if (c.getState() != null && c.getState().getTerminated() != null) {
                Integer code = c.getState().getTerminated().getExitCode();
                if (code != null && code != 0) {
                    return code;
                }
                any = code;
            }
        }
        return any;
    }

    private static String failure(Pod pod) {
        String name = pod.getMetadata().getName();
        String node = pod.getSpec().getNodeName();
        if (pod.getStatus().getContainerStatuses() != null) {
            for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
                var t = c.getState() == null ? null : c.getState().getTerminated();
                if (t != null && t.getExitCode() != null && t.getExitCode() != 0) {
                    return "task " + taskOf(pod) + " (pod " + name + " on node " + node + ") exited with "
                            + t.getExitCode() + (t.getReason() == null ? "" : " (" + t.getReason() + ")");
                }
            }
        }
        String reason = pod.getStatus().getReason();
        String message = pod.getStatus().getMessage();
        return "pod " + name + " on node " + node + " failed" + (reason == null ? "" : ": " + reason)
                + (message == null ? "" : " (" + message + ")");
    }

    private static String taskOf(Pod pod) {
        Map<String, String> a = pod.getMetadata().getAnnotations();
        Map<String, String> l = pod.getMetadata().getLabels();
        String task = a == null ? null : a.get(GangManifest.TASK_ANNOTATION);
        return (task == null ? "?" : task) + "-" + (l == null ? "?" : l.get(GangManifest.REPLICA));
    }

    /** The reason and message of a container waiting for one of {@code reasons}, or null. */
    private static String waiting(Pod pod, Set<String> reasons) {
        if (pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
            var w = c.getState() == null ? null : c.getState().getWaiting();
            if (w != null && reasons.contains(w.getReason())) {
                return w.getReason() + (w.getMessage() == null ? "" : " (" + w.getMessage() + ")");
            }
        }
        return null;
    }

    /**
     * Stops talking to the API at once, as a placement process that died would: no more creates, deletes or lists;
     * the watches and the client are left as they are. For tests (fabric8's mock server can stall when a watch is
     * closed while it sends an event; a halted backend closes nothing).
     */
    void halt() {
        closed = true;
        api.shutdownNow();
        scanner.shutdownNow();
    }

    /** Stops the watches and the worker; the pods keep running (a restarted placement adopts them). */
    @Override
    public void close() {
        closed = true;
        api.shutdownNow();
        scanner.shutdownNow();
        try {
            // a list or watch under way finishes first, so no watch is opened after the ones closed here
            api.awaitTermination(10, TimeUnit.SECONDS);
            scanner.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Watch p = podWatch;
        Watch n = nodeWatch;
        if (p != null) {
            p.close();
        }
        if (n != null) {
            n.close();
        }
        client.close();
    }
}
