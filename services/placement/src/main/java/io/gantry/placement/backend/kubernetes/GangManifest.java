package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.gantry.placement.backend.GangEnvironment;
import io.gantry.placement.backend.GangRanks;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.topology.CpuList;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.GpuShare;
import io.gantry.placement.core.PlacedTask;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The Kubernetes objects of one run: a pod per task replica bound to its node ({@code nodeName}, so the
 * Kubernetes scheduler never sees it), a headless service giving every pod a stable DNS name for the gang's
 * rendezvous, and a secret with the run token (kept out of the pod spec, which many can read). A task's spec may
 * give its own image (else the configured one), working directory, environment and mounts ({@code hostPath} or
 * {@code persistentVolumeClaim} volumes).
 *
 * <p>Names are derived from the allocation id, so creating a gang twice finds the first one (no duplicates) and a
 * restarted placement finds its pods again. Labels link each object to its allocation, job, attempt and task;
 * the exact ids (which need not fit a label value) are annotations.
 */
public record GangManifest(Allocation allocation, Secret secret, Service service, List<Pod> pods) {
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String MANAGER = "gantry-placement";
    public static final String ALLOCATION = "gantry.io/allocation-id";
    public static final String JOB = "gantry.io/job";
    public static final String ATTEMPT = "gantry.io/attempt";
    public static final String TASK = "gantry.io/task";
    public static final String REPLICA = "gantry.io/replica";
    public static final String RANK = "gantry.io/rank";
    public static final String JOB_ID_ANNOTATION = "gantry.io/job-id";
    public static final String TENANT_ANNOTATION = "gantry.io/tenant";
    public static final String TASK_ANNOTATION = "gantry.io/task-name";
    public static final String GPUS_ANNOTATION = "gantry.io/gpu-indices";
    /** The run's preemption notice (JSON), set on its pods when placement asks them to stop. */
    public static final String PREEMPTION_ANNOTATION = "gantry.io/preemption-notice";
    /** Where the container sees that annotation as a file (downward API; empty until it is set). */
    public static final String NOTICE_DIR = "/etc/gantry/notice";
    public static final String NOTICE_FILE = NOTICE_DIR + "/preemption";
    public static final String TOKEN_KEY = "run-token";
    public static final String CONTAINER = "task";

    public GangManifest {
        pods = List.copyOf(pods);
    }

    /**
     * {@code gantry-<16 hex>}: the service's name and the prefix of every object; the allocation id's own hex digits
     * when it is a UUID (as placement makes them), else a hash of it.
     */
    public static String baseName(String allocationId) {
        String hex = allocationId.toLowerCase(Locale.ROOT).matches("[0-9a-f-]{32,}")
                ? allocationId.replace("-", "").toLowerCase(Locale.ROOT) : hash(allocationId, 16);
        return "gantry-" + hex.substring(0, 16);
    }

    /** A pod's name: also its hostname, so at most 63 characters of {@code [a-z0-9-]}. */
    public static String podName(String allocationId, String task, int replica) {
        String t = task.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        if (t.isEmpty() || !t.equals(task) || t.length() > 30) {
            // two task names that read alike once cleaned stay apart by the hash of the original
            t = (t.length() > 23 ? t.substring(0, 23) : t).replaceAll("-+$", "");
            t = (t.isEmpty() ? "" : t + "-") + hash(task, 6);
        }
        return baseName(allocationId) + "-" + t + "-" + replica;
    }

    /** A value a label accepts: at most 63 of {@code [A-Za-z0-9._-]}, alphanumeric at both ends. */
    static String labelValue(String value) {
        String v = value.replaceAll("[^A-Za-z0-9._-]", "_");
        if (v.length() > 63) {
            v = v.substring(0, 56) + "-" + hash(value, 6);
        }
        return v.replaceAll("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "");
    }

    private static String hash(String s, int chars) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d).substring(0, chars);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The labels every object of the run carries (what the backend selects on). */
    public static Map<String, String> runLabels(Allocation a) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(MANAGED_BY, MANAGER);
        l.put(ALLOCATION, a.allocationId());
        l.put(JOB, labelValue(a.jobId()));
        l.put(ATTEMPT, Integer.toString(a.attempt()));
        return l;
    }

    public static GangManifest render(Allocation a, RunPlan plan, KubernetesSettings s) {
        String base = baseName(a.allocationId());
        String ns = s.namespace();
        Map<String, String> labels = runLabels(a);
        Map<String, String> annotations = Map.of(JOB_ID_ANNOTATION, a.jobId(), TENANT_ANNOTATION, a.tenant());
        Secret secret = plan.runToken() == null ? null : new SecretBuilder()
                .withNewMetadata().withName(base + "-run").withNamespace(ns).withLabels(labels)
                .withAnnotations(annotations).endMetadata()
                .withType("Opaque").withStringData(Map.of(TOKEN_KEY, plan.runToken())).build();
        Service service = new ServiceBuilder()
                .withNewMetadata().withName(base).withNamespace(ns).withLabels(labels).withAnnotations(annotations)
                .endMetadata()
                .withNewSpec().withClusterIP("None").withPublishNotReadyAddresses(true)
                .withSelector(Map.of(ALLOCATION, a.allocationId()))
                .addNewPort().withName("rendezvous").withPort(s.masterPort()).endPort()
                .endSpec().build();
        List<PlacedTask> ranks = GangRanks.inRankOrder(a);
        List<String> hosts = ranks.stream()
                .map(p -> podName(a.allocationId(), p.task(), p.replica()) + "." + base + "." + ns + ".svc").toList();
        List<Pod> pods = new ArrayList<>();
        for (int rank = 0; rank < ranks.size(); rank++) {
            PlacedTask p = ranks.get(rank);
            String name = podName(a.allocationId(), p.task(), p.replica());
            Map<String, String> podLabels = new LinkedHashMap<>(labels);
            podLabels.put(TASK, labelValue(p.task()));
            podLabels.put(REPLICA, Integer.toString(p.replica()));
            podLabels.put(RANK, Integer.toString(rank));
            Map<String, String> podAnnotations = new LinkedHashMap<>(annotations);
            podAnnotations.put(TASK_ANNOTATION, p.task());
            podAnnotations.put(GPUS_ANNOTATION, p.gpuIndices().stream().map(String::valueOf)
                    .collect(Collectors.joining(",")));
            List<EnvVar> env = env(a, p, rank, hosts, plan, secret, s);
            Map<String, Quantity> resources = resources(p, s);
            RunPlan.Task task = plan.task(p.task());
            ContainerBuilder c = new ContainerBuilder().withName(CONTAINER)
                    .withImage(task.image() != null ? task.image() : s.image())
                    .withImagePullPolicy("IfNotPresent").withEnv(env)
                    .withNewResources().withRequests(resources).withLimits(resources).endResources();
            List<String> command = task.command();
            if (!command.isEmpty()) {
                c.withCommand(command); // no shell, like the local backend; empty: the image's entrypoint
            }
            if (task.workingDir() != null) {
                c.withWorkingDir(task.workingDir());
            }
            List<Volume> volumes = new ArrayList<>();
            for (int m = 0; m < task.mounts().size(); m++) {
                RunPlan.Mount mount = task.mounts().get(m);
                String volume = "mount-" + m;
                VolumeBuilder v = new VolumeBuilder().withName(volume);
                if (mount.claim() != null) {
                    v.withNewPersistentVolumeClaim().withClaimName(mount.claim()).withReadOnly(mount.readOnly())
                            .endPersistentVolumeClaim();
                } else if (s.hostPathAllowed(mount.hostPath())) {
                    v.withNewHostPath().withPath(mount.hostPath()).endHostPath();
                } else {
                    // the run fails with this reason (start reports what render throws)
                    throw new IllegalArgumentException("task " + p.task() + " mounts the node's " + mount.hostPath()
                            + ", which gantry.placement.kubernetes.allowed-host-paths does not allow ("
                            + (s.allowedHostPaths().isEmpty() ? "none allowed" : s.allowedHostPaths()) + ")");
                }
                volumes.add(v.build());
                c.addNewVolumeMount().withName(volume).withMountPath(mount.mountPath()).withReadOnly(mount.readOnly())
                        .endVolumeMount();
            }
            // the preemption notice, as a file the kubelet refreshes when the annotation is set
            volumes.add(new VolumeBuilder().withName("gantry-notice").withNewDownwardAPI().addNewItem()
                    .withPath("preemption").withNewFieldRef().withFieldPath("metadata.annotations['"
                            + PREEMPTION_ANNOTATION + "']").endFieldRef().endItem().endDownwardAPI().build());
            c.addNewVolumeMount().withName("gantry-notice").withMountPath(NOTICE_DIR).withReadOnly(true)
                    .endVolumeMount();
            Container container = c.build();
            pods.add(new PodBuilder()
                    .withNewMetadata().withName(name).withNamespace(ns).withLabels(podLabels)
                    .withAnnotations(podAnnotations).endMetadata()
                    .withNewSpec()
                    .withNodeName(p.nodeId())
                    .withHostname(name).withSubdomain(base)
                    .withRestartPolicy("Never")
                    .withTerminationGracePeriodSeconds(s.graceSeconds())
                    // tenants' code gets no credentials of placement's and no links to other services
                    .withAutomountServiceAccountToken(false)
                    .withEnableServiceLinks(false)
                    .withTolerations(tolerations(s))
                    .withContainers(container)
                    .withVolumes(volumes)
                    .endSpec().build());
        }
        return new GangManifest(a, secret, service, pods);
    }

    /**
     * The dedicated taint's key with any value and effect: Gantry's nodes carry it so the default scheduler places
     * nothing there (NoSchedule) or evicts what is there (NoExecute); Gantry's own pods, bound by {@code nodeName},
     * must not be evicted by it.
     */
    static List<Toleration> tolerations(KubernetesSettings s) {
        return s.tolerationKey().isEmpty() ? List.of()
                : List.of(new TolerationBuilder().withKey(s.tolerationKey()).withOperator("Exists").build());
    }

    /**
     * Requests equal limits (Guaranteed QoS, so the kubelet's CPU manager can pin whole cores): CPU, memory, and
     * whole GPUs as {@code gpuResource} so the device plugin's accounting matches placement's; a MIG instance as
     * the mixed-strategy resource {@code nvidia.com/mig-<profile>}. A fraction requests no GPU resource (it shares
     * a device the plugin cannot split).
     */
    static Map<String, Quantity> resources(PlacedTask p, KubernetesSettings s) {
        Map<String, Quantity> r = new LinkedHashMap<>();
        if (p.cpuMillis() > 0) {
            r.put("cpu", new Quantity(p.cpuMillis() + "m"));
        }
        if (p.memoryMiB() > 0) {
            r.put("memory", new Quantity(p.memoryMiB() + "Mi"));
        }
        if (!s.gpuResource().isEmpty()) {
            if (!p.gpuIndices().isEmpty()) {
                r.put(s.gpuResource(), new Quantity(Integer.toString(p.gpuIndices().size())));
            }
            String vendor = s.gpuResource().contains("/") ? s.gpuResource().substring(0, s.gpuResource().indexOf('/'))
                    : "nvidia.com";
            for (GpuShare share : p.gpuShares()) {
                if (share.isMig()) {
                    r.merge(vendor + "/mig-" + share.migProfile(), new Quantity("1"),
                            (x, y) -> new Quantity(Integer.toString(Integer.parseInt(x.getAmount()) + 1)));
                }
            }
        }
        return r;
    }

    /**
     * The task's environment: the tenant's variables, then (winning over them) identity, devices, and the gang's
     * rendezvous. Devices: {@code NVIDIA_VISIBLE_DEVICES}
     * = the node's GPU indices placement chose (the NVIDIA container runtime exposes those), {@code
     * CUDA_VISIBLE_DEVICES} = {@code 0..n-1} (inside the container the visible GPUs are renumbered), {@code
     * GANTRY_GPU_INDICES} = the node's indices; no GPU: {@code NVIDIA_VISIBLE_DEVICES=void} (none, even in CUDA
     * images that default to all). Rendezvous (what torchrun, torch.distributed and MPI launchers read): {@code
     * MASTER_ADDR} (rank 0's DNS name), {@code MASTER_PORT}, {@code WORLD_SIZE} (pods in the gang), {@code RANK}
     * (this pod), the {@code PET_*} arguments of torchrun, and {@code GANTRY_HOSTS} (every pod's DNS name, rank
     * order, for a hostfile): {@link GangEnvironment}, as on every backend.
     */
    static List<EnvVar> env(Allocation a, PlacedTask p, int rank, List<String> hosts, RunPlan plan, Secret secret,
                            KubernetesSettings s) {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("GANTRY_JOB_ID", a.jobId());
        e.put("GANTRY_TASK", p.task());
        e.put("GANTRY_REPLICA", Integer.toString(p.replica()));
        e.put("GANTRY_ATTEMPT", Integer.toString(a.attempt()));
        e.put("GANTRY_ALLOCATION_ID", a.allocationId());
        e.put("GANTRY_PREEMPTION_NOTICE", NOTICE_FILE);
        List<Integer> gpus = p.gpuIndices();
        String indices = gpus.stream().map(String::valueOf).collect(Collectors.joining(","));
        e.put("NVIDIA_VISIBLE_DEVICES", gpus.isEmpty() ? "void" : indices);
        e.put("CUDA_VISIBLE_DEVICES", IntStream.range(0, gpus.size()).mapToObj(String::valueOf)
                .collect(Collectors.joining(",")));
        e.put("GANTRY_GPU_INDICES", indices);
        for (GpuShare share : p.gpuShares()) {
            e.put("GANTRY_GPU_MEMORY_MIB", Long.toString(share.memoryMiB()));
            e.put("CUDA_VISIBLE_DEVICES", "0");
            if (share.isMig()) {
                // the device plugin picks the instance of the requested profile; this says which one placement counted
                e.remove("NVIDIA_VISIBLE_DEVICES");
                e.put("GANTRY_MIG_DEVICE", share.index() + ":" + share.migProfile() + ":" + share.migSlice());
            } else {
                e.put("NVIDIA_VISIBLE_DEVICES", Integer.toString(share.index()));
                e.put("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", Integer.toString(Math.max(1, share.milli() / 10)));
                e.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=" + share.memoryMiB() + "M");
            }
        }
        if (!p.cpuSet().isEmpty()) {
            e.put("GANTRY_CPU_SET", CpuList.format(p.cpuSet()));
        }
        if (!p.rdmaNics().isEmpty()) {
            e.put("NCCL_IB_HCA", String.join(",", p.rdmaNics()));
        }
        e.putAll(GangEnvironment.rendezvous(a, p, hosts, s.masterPort()));
        if (plan.checkpointDir() != null) {
            e.put("GANTRY_CHECKPOINT_DIR", plan.checkpointDir());
        }
        if (plan.resumeFrom() != null) {
            e.put("GANTRY_RESUME_FROM", plan.resumeFrom());
        }
        if (!s.apiUrl().isEmpty()) {
            e.put("GANTRY_API_URL", s.apiUrl());
        }
        List<EnvVar> out = new ArrayList<>();
        GangEnvironment.merge(plan.task(p.task()).env(), e).forEach((k, v) -> out.add(new EnvVar(k, v, null)));
        if (secret != null) {
            out.add(new EnvVarBuilder().withName("GANTRY_RUN_TOKEN").withNewValueFrom().withNewSecretKeyRef()
                    .withName(secret.getMetadata().getName()).withKey(TOKEN_KEY).endSecretKeyRef().endValueFrom()
                    .build());
        }
        return out;
    }
}
