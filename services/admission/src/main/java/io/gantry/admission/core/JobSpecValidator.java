package io.gantry.admission.core;

import io.gantry.model.GpuShares;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a parsed JSON tree (maps, lists, strings, numbers, booleans, nulls) into a {@link JobSpec}, or into the
 * list of every bad field. It works on the tree rather than on a bound object so that unknown fields, wrong
 * types and out-of-range values all come back together with their paths, in one answer.
 *
 * <p>An explicit JSON {@code null} counts as "not given": optional fields take their default, required ones
 * are reported missing.
 */
public final class JobSpecValidator {
    /**
     * The refusal of GPUs while no node has registered: not the request's fault, and not for ever (a cluster that
     * is starting); admission answers it 503 with Retry-After when it is the only problem.
     */
    public static final String NO_NODES_YET = "cannot request GPUs: the cluster has no registered nodes yet";

    public static final int MAX_NAME_LENGTH = 128;
    public static final int MAX_TASK_GROUPS = 64;
    public static final int MIN_REPLICAS = 1;
    public static final int MAX_REPLICAS = 1024;
    public static final int MIN_PRIORITY = -1000;
    public static final int MAX_PRIORITY = 1000;
    public static final int DEFAULT_PRIORITY = 0;
    public static final int DEFAULT_REPLICAS = 1;
    public static final int DEFAULT_CPU_MILLIS = 1000;
    public static final long DEFAULT_MEMORY_MIB = 1024;
    /**
     * Time limits and run times: at most 366 days. Far beyond any real job, and small enough that every service can
     * add it to an instant or multiply it by GPUs and replicas without overflow.
     */
    public static final long MAX_SECONDS = 366L * 24 * 3600;
    /** Memory per task, host or GPU: at most 16 TiB. */
    public static final long MAX_MEMORY_MIB = 16L * 1024 * 1024;
    public static final int MAX_GPUS_PER_TASK = 1024;
    /** Look blank but are not white space or format characters (Hangul and braille fillers, Mongolian separator). */
    private static final Set<Integer> BLANK_LOOKING = Set.of(0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E);
    /** The zero-width joiner: a format character, but part of ordinary emoji sequences. */
    private static final int ZERO_WIDTH_JOINER = 0x200D;

    private static final Set<String> JOB_FIELDS =
            Set.of("name", "priority", "timeLimitSeconds", "tasks", "queue", "priorityClass", "topology",
                    "placementPolicy", "checkpoint", "successPolicy", "retry", "dependencies", "suspend", "pool",
                    "interactive");
    private static final Set<String> DEPENDENCY_FIELDS = Set.of("jobId", "condition");
    /** At most this many dependencies per job (Slurm has no fixed bound; this keeps a spec small and a check cheap). */
    public static final int MAX_DEPENDENCIES = 64;
    /** A job id as the read model stores it: the same rule as the HTTP layer's ({@code runtime.http.Ids}). */
    private static final java.util.regex.Pattern JOB_ID = java.util.regex.Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    /**
     * Which of some job ids name existing jobs of the submitting tenant. Another tenant's job must look exactly like a
     * missing one, so the answer is only ever "yours" or not.
     */
    @FunctionalInterface
    public interface OwnJobs {
        Set<String> existing(Set<String> jobIds);

        /** No job is known: any dependency is refused. */
        OwnJobs NONE = ids -> Set.of();
    }
    private static final Set<String> CHECKPOINT_FIELDS = Set.of("dir", "intervalSeconds");
    /** Paths: what a file system takes, bounded so any service can store them. */
    public static final int MAX_PATH_LENGTH = 1024;
    private static final Set<String> TASK_FIELDS = Set.of("name", "replicas", "command", "gpus", "gpuModel",
            "gpuModels", "gpuTier", "cpus", "memoryMiB", "runSeconds", "gpuMilli", "gpuMemoryMiB", "migProfile", "env",
            "workingDir", "image", "mounts");
    private static final Set<String> MOUNT_FIELDS = Set.of("mountPath", "hostPath", "claim", "readOnly");
    private static final Set<String> SUCCESS_POLICY_FIELDS = Set.of("leader");
    private static final Set<String> RETRY_FIELDS = Set.of("maxRetries", "backoffSeconds");
    public static final int MAX_RETRIES = 10;
    public static final int MAX_BACKOFF_SECONDS = 3600;
    /** Environment variables per task group: bounded so a spec stays far below a Kafka record's 1 MiB. */
    public static final int MAX_ENV_VARS = 128;
    public static final int MAX_ENV_NAME_LENGTH = 256;
    public static final int MAX_ENV_VALUE_LENGTH = 32 * 1024;
    /** Names and values of every task group's variables together, in characters. */
    public static final int MAX_ENV_CHARS_PER_JOB = 256 * 1024;
    public static final int MAX_MOUNTS = 32;
    public static final int MAX_IMAGE_LENGTH = 512;
    private static final String ENV_NAME = "[A-Za-z_][A-Za-z0-9_]*";
    /**
     * What Gantry itself sets in a task's environment (devices, the gang's rendezvous, torchrun's arguments): a
     * tenant's value would either be overwritten or break the run, so it is refused. {@code GANTRY_} and
     * {@code SLURM_} names are refused as a whole (Gantry's and the Slurm backend's namespaces).
     */
    public static final Set<String> RESERVED_ENV = Set.of("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "NCCL_IB_HCA", "MASTER_ADDR",
            "MASTER_PORT", "WORLD_SIZE", "RANK", "PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR",
            "PET_MASTER_PORT", "PET_NPROC_PER_NODE");
    public static final List<String> RESERVED_ENV_PREFIXES = List.of("GANTRY_", "SLURM_");
    /**
     * A container image reference as registries accept it: {@code [host[:port]/]path[:tag][@digest]}, path
     * components lower case.
     */
    private static final java.util.regex.Pattern IMAGE = java.util.regex.Pattern.compile(
            "(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?/)?"
                    + "[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*)*"
                    + "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
                    + "(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?");
    /** A persistent volume claim's name (a Kubernetes DNS subdomain). */
    private static final String CLAIM = "[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?";
    private static final Set<String> TOPOLOGY_FIELDS = Set.of("required", "preferred");
    private static final String IDENTIFIER = "[a-z0-9][a-z0-9-]{0,62}";
    private static final BigDecimal THOUSAND = BigDecimal.valueOf(1000);

    public Validated validate(Object tree, ClusterLimits limits) {
        return validate(tree, limits, SchedulingCatalog.unknown(), null);
    }

    /**
     * Validates a spec submitted by {@code tenant} against the cluster and the configuration: a queue the tenant
     * does not have, an unknown priority class or GPU tier, or a gang bigger than the whole cluster is refused.
     */
    public Validated validate(Object tree, ClusterLimits limits, SchedulingCatalog catalog, String tenant) {
        return validate(tree, limits, catalog, tenant, OwnJobs.NONE, null);
    }

    /**
     * As {@link #validate(Object, ClusterLimits, SchedulingCatalog, String)}, with the jobs {@code dependencies} may
     * name ({@code ownJobs}) and the id the new job will have, when it is known already ({@code selfId}, from an
     * Idempotency-Key; null otherwise).
     */
    public Validated validate(Object tree, ClusterLimits limits, SchedulingCatalog catalog, String tenant,
                              OwnJobs ownJobs, String selfId) {
        List<FieldError> errors = new ArrayList<>();
        if (!(tree instanceof Map<?, ?> job)) {
            return Validated.invalid(List.of(new FieldError("body", "must be a JSON object")));
        }
        unknownFields(job, JOB_FIELDS, "", errors);
        String name = name(job.get("name"), "name", errors);
        Long priority = integer(job.get("priority"), "priority", MIN_PRIORITY, MAX_PRIORITY,
                "must be between " + MIN_PRIORITY + " and " + MAX_PRIORITY, errors);
        Long timeLimit = integer(job.get("timeLimitSeconds"), "timeLimitSeconds", 1, MAX_SECONDS,
                "must be between 1 and " + MAX_SECONDS + " (366 days)", errors);
        List<TaskSpec> tasks = tasks(job.get("tasks"), limits, catalog, errors);
        String queue = identifier(job.get("queue"), "queue", errors);
        String priorityClass = identifier(job.get("priorityClass"), "priorityClass", errors);
        JobSpec.Topology topology = topology(job.get("topology"), errors);
        String policy = placementPolicy(job.get("placementPolicy"), errors);
        JobSpec.Checkpoint checkpoint = checkpoint(job.get("checkpoint"), errors);
        JobSpec.SuccessPolicy successPolicy = successPolicy(job.get("successPolicy"), job.get("tasks"), errors);
        JobSpec.Retry retry = retry(job.get("retry"), errors);
        List<JobSpec.Dependency> dependencies = dependencies(job.get("dependencies"), ownJobs, selfId, errors);
        boolean suspend = bool(job.get("suspend"), "suspend", errors);
        String pool = identifier(job.get("pool"), "pool", errors);
        boolean interactive = job.get("interactive") == null || bool(job.get("interactive"), "interactive", errors);
        envTotal(tasks, errors);
        if (errors.isEmpty()) {
            String queueProblem = catalog.queueProblem(tenant, queue);
            if (queueProblem != null) {
                errors.add(new FieldError("queue", queueProblem));
            }
            String poolProblem = pool == null ? null : catalog.poolProblem(pool);
            if (poolProblem != null) {
                errors.add(new FieldError("pool", poolProblem));
            }
            String classProblem = priorityClass == null ? null : catalog.priorityClassProblem(priorityClass);
            if (classProblem != null) {
                errors.add(new FieldError("priorityClass", classProblem));
            }
            wholeClusterFit(tasks, limits, catalog, errors);
        }
        if (!errors.isEmpty()) {
            return Validated.invalid(errors);
        }
        return Validated.ok(new JobSpec(name, priority == null ? DEFAULT_PRIORITY : priority.intValue(), timeLimit,
                tasks, queue, priorityClass, topology, policy, checkpoint, successPolicy, retry, dependencies,
                suspend, pool, interactive));
    }

    /** {@code true}/{@code false}, or absent (false). */
    private static boolean bool(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return false;
        }
        if (!(value instanceof Boolean b)) {
            errors.add(new FieldError(path, "must be true or false"));
            return false;
        }
        return b;
    }

    /**
     * {@code [{"jobId": ..., "condition": "afterok" | "afterany" | "afternotok"}]}: at most {@link #MAX_DEPENDENCIES},
     * distinct, not the job itself, each an existing job of the tenant (asked once for all of them).
     */
    private static List<JobSpec.Dependency> dependencies(Object value, OwnJobs ownJobs, String selfId,
                                                         List<FieldError> errors) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            errors.add(new FieldError("dependencies", "must be a list of {jobId, condition}"));
            return List.of();
        }
        if (list.size() > MAX_DEPENDENCIES) {
            errors.add(new FieldError("dependencies", "at most " + MAX_DEPENDENCIES + " dependencies, not "
                    + list.size()));
            return List.of();
        }
        int before = errors.size();
        List<JobSpec.Dependency> out = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String path = "dependencies[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> d)) {
                errors.add(new FieldError(path, "must be an object with `jobId` and optionally `condition` ("
                        + String.join(", ", JobSpec.DEPENDENCY_CONDITIONS) + ")"));
                continue;
            }
            unknownFields(d, DEPENDENCY_FIELDS, path + ".", errors);
            Object id = d.get("jobId");
            String condition = JobSpec.DEPENDENCY_CONDITIONS.get(0);
            if (d.get("condition") != null) {
                condition = d.get("condition") instanceof String c ? c.toLowerCase(java.util.Locale.ROOT) : null;
                if (!JobSpec.DEPENDENCY_CONDITIONS.contains(condition)) {
                    errors.add(new FieldError(path + ".condition", "must be one of "
                            + String.join(", ", JobSpec.DEPENDENCY_CONDITIONS)));
                    continue;
                }
            }
            if (id == null) {
                errors.add(new FieldError(path + ".jobId", "is required: the id of a job of yours"));
            } else if (!(id instanceof String s) || !JOB_ID.matcher(s).matches()) {
                errors.add(new FieldError(path + ".jobId", "is not a job id (1..64 letters, digits or '._:-')"));
            } else if (s.equals(selfId)) {
                errors.add(new FieldError(path + ".jobId", "is this job itself"));
            } else if (seen.containsKey(s)) {
                errors.add(new FieldError(path + ".jobId", "duplicate dependency " + s + " (also dependencies["
                        + seen.get(s) + "])"));
            } else {
                seen.put(s, i);
                out.add(new JobSpec.Dependency(s, condition));
            }
        }
        if (errors.size() > before || out.isEmpty()) {
            return List.of();
        }
        Set<String> existing = ownJobs.existing(new java.util.HashSet<>(seen.keySet()));
        for (JobSpec.Dependency d : out) {
            if (!existing.contains(d.jobId())) {
                errors.add(new FieldError("dependencies[" + seen.get(d.jobId()) + "].jobId", "no job " + d.jobId()
                        + " of yours (a dependency must exist when this job is submitted)"));
            }
        }
        return out;
    }

    /** {@code {"maxRetries": 0-10, "backoffSeconds": 0-3600 (default 10)}}, or null. */
    private static JobSpec.Retry retry(Object value, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> p)) {
            errors.add(new FieldError("retry", "must be an object with `maxRetries` (0-" + MAX_RETRIES
                    + ") and optionally `backoffSeconds` (0-" + MAX_BACKOFF_SECONDS + ")"));
            return null;
        }
        int before = errors.size();
        unknownFields(p, RETRY_FIELDS, "retry.", errors);
        if (p.get("maxRetries") == null) {
            errors.add(new FieldError("retry.maxRetries", "is required: how often a failed run is tried again (0-"
                    + MAX_RETRIES + ")"));
        }
        Long max = integer(p.get("maxRetries"), "retry.maxRetries", 0, MAX_RETRIES,
                "must be between 0 and " + MAX_RETRIES, errors);
        Long backoff = integer(p.get("backoffSeconds"), "retry.backoffSeconds", 0, MAX_BACKOFF_SECONDS,
                "must be between 0 and " + MAX_BACKOFF_SECONDS + " (one hour)", errors);
        return errors.size() > before || max == null ? null
                : new JobSpec.Retry(max.intValue(), backoff == null ? 10 : backoff.intValue());
    }

    /** {@code {"leader": <a task group of this job>}}, or null. */
    private static JobSpec.SuccessPolicy successPolicy(Object value, Object tasks, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> p)) {
            errors.add(new FieldError("successPolicy", "must be an object with `leader` (a task group's name)"));
            return null;
        }
        int before = errors.size();
        unknownFields(p, SUCCESS_POLICY_FIELDS, "successPolicy.", errors);
        Object leader = p.get("leader");
        List<String> names = new ArrayList<>();
        if (tasks instanceof List<?> list) {
            list.forEach(t -> {
                if (t instanceof Map<?, ?> m && m.get("name") instanceof String n) {
                    names.add(n);
                }
            });
        }
        if (leader == null) {
            errors.add(new FieldError("successPolicy.leader", "is required: the task group whose replicas decide "
                    + "success"));
        } else if (!(leader instanceof String l)) {
            errors.add(new FieldError("successPolicy.leader", "must be a string (a task group's name)"));
        } else if (!names.contains(l)) {
            errors.add(new FieldError("successPolicy.leader", "names no task group of this job: '" + l + "' (task "
                    + "groups: " + names + ")"));
        }
        return errors.size() > before ? null : new JobSpec.SuccessPolicy((String) leader);
    }

    /** All groups' variables together stay bounded (each group alone is checked with its task). */
    private static void envTotal(List<TaskSpec> tasks, List<FieldError> errors) {
        long chars = 0;
        for (TaskSpec t : tasks) {
            for (Map.Entry<String, String> e : t.env().entrySet()) {
                chars += e.getKey().length() + e.getValue().length();
            }
        }
        if (chars > MAX_ENV_CHARS_PER_JOB) {
            errors.add(new FieldError("tasks", "the task groups' environment variables hold " + chars
                    + " characters together, more than " + MAX_ENV_CHARS_PER_JOB));
        }
    }

    /** Names, values and bounds of a task's environment; null when something is wrong (reported). */
    private static Map<String, String> env(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?> map)) {
            errors.add(new FieldError(path, "must be an object of variable names to string values"));
            return null;
        }
        int before = errors.size();
        if (map.size() > MAX_ENV_VARS) {
            errors.add(new FieldError(path, "must hold at most " + MAX_ENV_VARS + " variables, not " + map.size()));
            return null;
        }
        Map<String, String> env = new java.util.TreeMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String name = String.valueOf(e.getKey());
            String at = path + "." + name;
            String problem = envNameProblem(name);
            if (problem != null) {
                errors.add(new FieldError(at, problem));
                continue;
            }
            if (!(e.getValue() instanceof String v)) {
                errors.add(new FieldError(at, e.getValue() == null ? "must be a string (give \"\" for an empty value)"
                        : "must be a string (quote numbers and booleans, e.g. \"4\")"));
                continue;
            }
            if (v.length() > MAX_ENV_VALUE_LENGTH) {
                errors.add(new FieldError(at, "must be at most " + MAX_ENV_VALUE_LENGTH + " characters, not "
                        + v.length()));
            } else if (argumentProblem(v) != null) {
                errors.add(new FieldError(at, argumentProblem(v)));
            } else {
                env.put(name, v);
            }
        }
        return errors.size() > before ? null : env;
    }

    private static String envNameProblem(String name) {
        if (name.length() > MAX_ENV_NAME_LENGTH) {
            return "a variable name must be at most " + MAX_ENV_NAME_LENGTH + " characters";
        }
        if (!name.matches(ENV_NAME)) {
            return "is not a variable name: letters, digits and '_', not starting with a digit";
        }
        for (String prefix : RESERVED_ENV_PREFIXES) {
            if (name.startsWith(prefix)) {
                return "names starting with " + prefix + " are reserved: the backend sets them";
            }
        }
        if (RESERVED_ENV.contains(name)) {
            return "is set by Gantry itself (devices and the gang's rendezvous) and cannot be overridden";
        }
        return null;
    }

    /** A container image reference, or null (absent, or reported bad). */
    private static String image(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s) || s.length() > MAX_IMAGE_LENGTH || !IMAGE.matcher(s).matches()) {
            errors.add(new FieldError(path, "must be a container image reference such as "
                    + "registry.example.com:5000/team/trainer:1.4 or pytorch/pytorch@sha256:<digest> (at most "
                    + MAX_IMAGE_LENGTH + " characters)"));
            return null;
        }
        return s;
    }

    private static List<TaskSpec.Mount> mounts(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            errors.add(new FieldError(path, "must be an array of mounts ({mountPath, hostPath or claim, readOnly})"));
            return null;
        }
        if (list.size() > MAX_MOUNTS) {
            errors.add(new FieldError(path, "must hold at most " + MAX_MOUNTS + " mounts, not " + list.size()));
            return null;
        }
        int before = errors.size();
        List<TaskSpec.Mount> mounts = new ArrayList<>();
        Map<String, Integer> byPath = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String at = path + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                errors.add(new FieldError(at, "must be an object with mountPath and hostPath or claim"));
                continue;
            }
            int own = errors.size();
            unknownFields(m, MOUNT_FIELDS, at + ".", errors);
            String mountPath = null;
            if (m.get("mountPath") == null) {
                errors.add(new FieldError(at + ".mountPath", "is required"));
            } else {
                mountPath = absolutePath(m.get("mountPath"), at + ".mountPath", errors);
                if ("/".equals(mountPath)) {
                    errors.add(new FieldError(at + ".mountPath", "must not be / (the container's root)"));
                } else if (mountPath != null) {
                    Integer first = byPath.putIfAbsent(mountPath.replaceAll("/+$", ""), i);
                    if (first != null) {
                        errors.add(new FieldError(at + ".mountPath", "duplicate mount path '" + mountPath + "' (also "
                                + path + "[" + first + "])"));
                    }
                }
            }
            String hostPath = m.get("hostPath") == null ? null : absolutePath(m.get("hostPath"), at + ".hostPath",
                    errors);
            String claim = null;
            if (m.get("claim") != null) {
                if (!(m.get("claim") instanceof String c) || !c.matches(CLAIM)) {
                    errors.add(new FieldError(at + ".claim", "must be a persistent volume claim's name (lower-case "
                            + "letters, digits, '-' and '.'; at most 253)"));
                } else {
                    claim = c;
                }
            }
            if ((m.get("hostPath") == null) == (m.get("claim") == null)) {
                errors.add(new FieldError(at + ".hostPath", "give exactly one of hostPath and claim"));
            }
            Object readOnly = m.get("readOnly");
            if (readOnly != null && !(readOnly instanceof Boolean)) {
                errors.add(new FieldError(at + ".readOnly", "must be true or false"));
            }
            if (errors.size() == own) {
                mounts.add(new TaskSpec.Mount(mountPath, hostPath, claim, Boolean.TRUE.equals(readOnly)));
            }
        }
        return errors.size() > before ? null : mounts;
    }

    private static JobSpec.Checkpoint checkpoint(Object value, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> c)) {
            errors.add(new FieldError("checkpoint", "must be an object with `dir` and optionally `intervalSeconds`"));
            return null;
        }
        int before = errors.size();
        unknownFields(c, CHECKPOINT_FIELDS, "checkpoint.", errors);
        String dir = null;
        if (c.get("dir") == null) {
            errors.add(new FieldError("checkpoint.dir", "is required"));
        } else {
            dir = absolutePath(c.get("dir"), "checkpoint.dir", errors);
        }
        Long interval = integer(c.get("intervalSeconds"), "checkpoint.intervalSeconds", 1, MAX_SECONDS,
                "must be between 1 and " + MAX_SECONDS + " (366 days)", errors);
        return errors.size() > before ? null : new JobSpec.Checkpoint(dir, interval);
    }

    /** An absolute path of at most {@link #MAX_PATH_LENGTH} characters, without control characters, or null. */
    public static String absolutePath(Object value, String path, List<FieldError> errors) {
        if (!(value instanceof String s)) {
            errors.add(new FieldError(path, "must be a string"));
            return null;
        }
        if (!s.startsWith("/") || s.length() > MAX_PATH_LENGTH || s.contains("/../") || s.endsWith("/..")
                || s.chars().anyMatch(ch -> ch < 0x20 || ch == 0x7f) || argumentProblem(s) != null) {
            errors.add(new FieldError(path, "must be an absolute path of at most " + MAX_PATH_LENGTH
                    + " characters, without `..` or control characters"));
            return null;
        }
        return s;
    }

    private static String placementPolicy(Object value, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        String policy = value instanceof String s ? s.toLowerCase(java.util.Locale.ROOT) : null;
        if (policy == null || !JobSpec.PLACEMENT_POLICIES.contains(policy)) {
            errors.add(new FieldError("placementPolicy", "must be one of " + JobSpec.PLACEMENT_POLICIES));
            return null;
        }
        return policy;
    }

    private static JobSpec.Topology topology(Object value, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> t)) {
            errors.add(new FieldError("topology", "must be an object with `required` and/or `preferred`"));
            return null;
        }
        int before = errors.size();
        unknownFields(t, TOPOLOGY_FIELDS, "topology.", errors);
        String required = level(t.get("required"), "topology.required", errors);
        String preferred = level(t.get("preferred"), "topology.preferred", errors);
        if (errors.size() > before) {
            return null;
        }
        required = required == null ? "CLUSTER" : required;
        preferred = preferred == null ? required : preferred;
        if (JobSpec.TOPOLOGY_LEVELS.indexOf(preferred) > JobSpec.TOPOLOGY_LEVELS.indexOf(required)) {
            errors.add(new FieldError("topology.preferred", "must be at least as tight as required ("
                    + required + "), not " + preferred));
            return null;
        }
        return new JobSpec.Topology(required, preferred);
    }

    private static String level(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        String level = value instanceof String s ? s.toUpperCase(java.util.Locale.ROOT) : null;
        if (level == null || !JobSpec.TOPOLOGY_LEVELS.contains(level)) {
            errors.add(new FieldError(path, "must be one of " + JobSpec.TOPOLOGY_LEVELS));
            return null;
        }
        return level;
    }

    private static String identifier(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s) || !s.matches(IDENTIFIER)) {
            errors.add(new FieldError(path, "must be a lower-case name (letters, digits, '-'; at most 63)"));
            return null;
        }
        return s;
    }

    /**
     * A gang is placed all at once, so it can never run if it asks for more GPUs than the cluster has: in all, or of
     * the models its tasks accept. (Fractions and MIG slices share devices and are not counted.)
     */
    private static void wholeClusterFit(List<TaskSpec> tasks, ClusterLimits limits, SchedulingCatalog catalog,
                                        List<FieldError> errors) {
        if (limits.nodes() == 0) {
            return;
        }
        long cpu = tasks.stream().mapToLong(t -> (long) t.replicas() * t.cpuMillis()).sum();
        long memory = tasks.stream().mapToLong(t -> t.replicas() * t.memoryMiB()).sum();
        if (limits.totalCpuMillis() > 0 && cpu > limits.totalCpuMillis()) {
            errors.add(new FieldError("tasks", "the job asks for " + cpus(cpu) + " CPUs at once, more than the "
                    + cpus(limits.totalCpuMillis()) + " CPUs of the whole cluster, so it could never be placed"));
        }
        if (limits.totalMemoryMiB() > 0 && memory > limits.totalMemoryMiB()) {
            errors.add(new FieldError("tasks", "the job asks for " + memory + " MiB of memory at once, more than the "
                    + limits.totalMemoryMiB() + " MiB of the whole cluster, so it could never be placed"));
        }
        long asked = 0;
        java.util.Set<String> models = new java.util.TreeSet<>();
        boolean anyModel = false;
        for (TaskSpec t : tasks) {
            if (t.gpus() <= 0) {
                continue;
            }
            asked += (long) t.replicas() * t.gpus();
            List<String> accepted = acceptedModels(t, catalog);
            if (accepted.isEmpty()) {
                anyModel = true;
            }
            models.addAll(accepted);
        }
        if (asked == 0) {
            return;
        }
        long available = anyModel ? limits.totalGpus()
                : models.stream().mapToLong(m -> limits.totalGpusByModel().getOrDefault(m, 0)).sum();
        if (asked > available) {
            errors.add(new FieldError("tasks", "the job asks for " + asked + " GPUs at once, more than the "
                    + available + (anyModel ? " GPUs of the whole cluster" : " " + String.join("/", models)
                    + " GPUs of the whole cluster") + ", so it could never be placed"));
        }
    }

    private static String cpus(long millis) {
        return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString();
    }

    private static List<String> acceptedModels(TaskSpec t, SchedulingCatalog catalog) {
        if (t.gpuModel() != null) {
            return List.of(t.gpuModel());
        }
        if (!t.gpuModels().isEmpty()) {
            return t.gpuModels();
        }
        if (t.gpuTier() != null && catalog.tiers() != null) {
            return catalog.tiers().getOrDefault(t.gpuTier(), List.of());
        }
        return List.of();
    }

    private List<TaskSpec> tasks(Object value, ClusterLimits limits, SchedulingCatalog catalog,
                                 List<FieldError> errors) {
        if (value == null) {
            errors.add(new FieldError("tasks", "is required"));
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            errors.add(new FieldError("tasks", "must be an array of task groups"));
            return List.of();
        }
        if (list.isEmpty()) {
            errors.add(new FieldError("tasks", "must contain at least one task group"));
        } else if (list.size() > MAX_TASK_GROUPS) {
            errors.add(new FieldError("tasks", "must contain at most " + MAX_TASK_GROUPS + " task groups, not "
                    + list.size()));
        }
        List<TaskSpec> tasks = new ArrayList<>();
        Map<String, Integer> firstIndexByName = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String path = "tasks[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> task)) {
                errors.add(new FieldError(path, "must be an object"));
                continue;
            }
            TaskSpec spec = task(task, path, limits, catalog, errors);
            if (spec != null) {
                tasks.add(spec);
            }
            // checked on the raw name, so a duplicate is reported even when either task has other faults
            if (task.get("name") instanceof String n && !n.isBlank()) {
                Integer first = firstIndexByName.putIfAbsent(n, i);
                if (first != null) {
                    errors.add(new FieldError(path + ".name", "duplicate task name '" + n + "' (also tasks["
                            + first + "])"));
                }
            }
        }
        return tasks;
    }

    private TaskSpec task(Map<?, ?> task, String path, ClusterLimits limits, SchedulingCatalog catalog,
                          List<FieldError> errors) {
        int before = errors.size();
        unknownFields(task, TASK_FIELDS, path + ".", errors);
        String name = name(task.get("name"), path + ".name", errors);
        Long replicas = integer(task.get("replicas"), path + ".replicas", MIN_REPLICAS, MAX_REPLICAS,
                "must be between " + MIN_REPLICAS + " and " + MAX_REPLICAS, errors);
        List<String> command = command(task.get("command"), path + ".command", errors);
        Long gpus = integer(task.get("gpus"), path + ".gpus", 0, MAX_GPUS_PER_TASK,
                "must be between 0 and " + MAX_GPUS_PER_TASK, errors);
        String gpuModel = gpuModel(task.get("gpuModel"), path + ".gpuModel", limits, errors);
        List<String> gpuModels = gpuModels(task.get("gpuModels"), path + ".gpuModels", limits, errors);
        String gpuTier = identifier(task.get("gpuTier"), path + ".gpuTier", errors);
        String tierProblem = gpuTier == null ? null : catalog.tierProblem(gpuTier);
        if (tierProblem != null) {
            errors.add(new FieldError(path + ".gpuTier", tierProblem));
        }
        int choices = (task.get("gpuModel") != null ? 1 : 0) + (task.get("gpuModels") != null ? 1 : 0)
                + (task.get("gpuTier") != null ? 1 : 0);
        if (choices > 1) {
            errors.add(new FieldError(path + ".gpuModel", "give at most one of gpuModel, gpuModels and gpuTier"));
        }
        if (gpus != null && gpus > 0) {
            gpuFit(gpus.intValue(), gpuModel, gpuModels, path + ".gpus", limits, errors);
        }
        Integer cpuMillis = cpus(task.get("cpus"), path + ".cpus", errors);
        Long memory = integer(task.get("memoryMiB"), path + ".memoryMiB", 1, MAX_MEMORY_MIB,
                "must be between 1 and " + MAX_MEMORY_MIB + " (16 TiB)", errors);
        nodeFit(cpuMillis, memory, path, limits, errors);
        Long runSeconds = integer(task.get("runSeconds"), path + ".runSeconds", 1, MAX_SECONDS,
                "must be between 1 and " + MAX_SECONDS + " (366 days)", errors);
        boolean wholeGpus = gpus != null && gpus > 0;
        Long gpuMilli = integer(task.get("gpuMilli"), path + ".gpuMilli", GpuShares.MIN_FRACTION, GpuShares.MAX_FRACTION,
                "must be 1-999 (thousandths of one GPU) and needs gpus = 0", errors);
        if (gpuMilli != null && wholeGpus) {
            errors.add(new FieldError(path + ".gpuMilli", "must be 1-999 (thousandths of one GPU) and needs gpus = 0, "
                    + "not " + gpus));
        }
        Long gpuMemory = integer(task.get("gpuMemoryMiB"), path + ".gpuMemoryMiB", 1, MAX_MEMORY_MIB,
                "must be between 1 and " + MAX_MEMORY_MIB + " (16 TiB)", errors);
        if (task.get("gpuMemoryMiB") != null && task.get("gpuMilli") == null) {
            errors.add(new FieldError(path + ".gpuMemoryMiB", "needs gpuMilli (GPU memory of a fractional task)"));
        }
        String migProfile = migProfile(task.get("migProfile"), path + ".migProfile", errors);
        if (migProfile != null && wholeGpus) {
            errors.add(new FieldError(path + ".migProfile", "needs gpus = 0 (a MIG instance instead of whole GPUs), "
                    + "not " + gpus));
        }
        if (task.get("migProfile") != null && task.get("gpuMilli") != null) {
            errors.add(new FieldError(path + ".migProfile", "give gpuMilli or migProfile, not both"));
        }
        if ((gpuMilli != null || migProfile != null) && limits.nodes() == 0) {
            errors.add(new FieldError(path + (gpuMilli != null ? ".gpuMilli" : ".migProfile"),
                    NO_NODES_YET));
        } else if (migProfile != null && gpuTier == null) {
            migFit(migProfile, gpuModel, gpuModels, path + ".migProfile", limits, errors);
        }
        Map<String, String> env = env(task.get("env"), path + ".env", errors);
        String workingDir = task.get("workingDir") == null ? null
                : absolutePath(task.get("workingDir"), path + ".workingDir", errors);
        String image = image(task.get("image"), path + ".image", errors);
        List<TaskSpec.Mount> mounts = mounts(task.get("mounts"), path + ".mounts", errors);
        if (errors.size() > before) {
            return null;
        }
        return new TaskSpec(name, replicas == null ? DEFAULT_REPLICAS : replicas.intValue(), command,
                gpus == null ? 0 : gpus.intValue(), gpuModel, cpuMillis == null ? DEFAULT_CPU_MILLIS : cpuMillis,
                memory == null ? DEFAULT_MEMORY_MIB : memory, runSeconds, gpuModels, gpuTier,
                gpuMilli == null ? null : gpuMilli.intValue(), gpuMemory, migProfile, env, workingDir, image, mounts);
    }

    /**
     * A MIG instance no registered GPU of the models the task accepts can host would wait forever: refused, naming
     * what they offer. Not judged when a registration did not say what it offers (an older placement), nor for a
     * tier (its models are the queue's to resolve).
     */
    private static void migFit(String profile, String gpuModel, List<String> gpuModels, String path,
                               ClusterLimits limits, List<FieldError> errors) {
        Map<String, java.util.Set<String>> offers = limits.migProfilesByModel();
        if (offers == null) {
            return;
        }
        List<String> models = gpuModel != null ? List.of(gpuModel)
                : gpuModels != null && !gpuModels.isEmpty() ? gpuModels
                : List.copyOf(new java.util.TreeSet<>(limits.maxGpusPerNodeByModel().keySet()));
        java.util.TreeSet<String> offered = new java.util.TreeSet<>();
        for (String m : models) {
            offered.addAll(offers.getOrDefault(m, java.util.Set.of()));
        }
        if (!offered.contains(profile)) {
            String which = gpuModel != null ? "of model " + gpuModel
                    : gpuModels != null && !gpuModels.isEmpty() ? "of models " + String.join(", ", gpuModels) : "";
            errors.add(new FieldError(path, "no registered MIG-capable GPU " + which + (which.isEmpty() ? "" : " ")
                    + "offers " + profile + (offered.isEmpty() ? " (none offers any MIG profile)"
                    : " (offered: " + String.join(", ", offered) + ")")));
        }
    }

    private static String migProfile(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s) || !GpuShares.isMigProfile(s)) {
            errors.add(new FieldError(path, "must be a MIG profile such as 1g.10gb or 3g.40gb"));
            return null;
        }
        return s;
    }

    private static List<String> gpuModels(Object value, String path, ClusterLimits limits, List<FieldError> errors) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            errors.add(new FieldError(path, "must be a non-empty array of GPU models, in order of preference"));
            return List.of();
        }
        List<String> models = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String model = gpuModel(list.get(i), path + "[" + i + "]", limits, errors);
            if (model != null && models.contains(model)) {
                errors.add(new FieldError(path + "[" + i + "]", "duplicate GPU model '" + model + "'"));
            } else if (model != null) {
                models.add(model);
            }
        }
        return models;
    }

    private static void gpuFit(int gpus, String gpuModel, List<String> gpuModels, String path, ClusterLimits limits,
                               List<FieldError> errors) {
        if (!gpuModels.isEmpty() && limits.nodes() > 0) {
            int best = gpuModels.stream().mapToInt(m -> limits.maxGpusPerNodeByModel().getOrDefault(m, 0)).max()
                    .orElse(0);
            if (gpus > best) {
                errors.add(new FieldError(path, "no registered node has more than " + best + " GPUs of "
                        + gpuModels + ", so " + gpus + " per task can never be placed"));
            }
            return;
        }
        if (limits.nodes() == 0) {
            errors.add(new FieldError(path, NO_NODES_YET));
        } else if (gpus > limits.maxGpusPerNode()) {
            errors.add(new FieldError(path, "no registered node has more than " + limits.maxGpusPerNode()
                    + " GPUs, so " + gpus + " per task can never be placed"));
        } else if (gpuModel != null && limits.maxGpusPerNodeByModel().containsKey(gpuModel)
                && gpus > limits.maxGpusPerNodeByModel().get(gpuModel)) {
            errors.add(new FieldError(path, "no registered node has more than "
                    + limits.maxGpusPerNodeByModel().get(gpuModel) + " " + gpuModel + " GPUs, so " + gpus
                    + " per task can never be placed"));
        }
    }

    /** CPU and memory no registered node has (placement puts them on one NUMA socket, with the task's GPUs). */
    private static void nodeFit(Integer cpuMillis, Long memoryMiB, String path, ClusterLimits limits,
                                List<FieldError> errors) {
        if (limits.nodes() == 0) {
            return;
        }
        if (cpuMillis != null && limits.maxSocketCpuMillis() > 0 && cpuMillis > limits.maxSocketCpuMillis()) {
            errors.add(new FieldError(path + ".cpus", "no registered node has more than "
                    + BigDecimal.valueOf(limits.maxSocketCpuMillis(), 3).stripTrailingZeros().toPlainString()
                    + " CPUs on one NUMA socket (a task's CPUs are on its GPUs' socket), so "
                    + BigDecimal.valueOf(cpuMillis, 3).stripTrailingZeros().toPlainString()
                    + " per task can never be placed"));
        }
        if (memoryMiB != null && limits.maxSocketMemoryMiB() > 0 && memoryMiB > limits.maxSocketMemoryMiB()) {
            errors.add(new FieldError(path + ".memoryMiB", "no registered node has more than "
                    + limits.maxSocketMemoryMiB() + " MiB of memory on one NUMA socket (or in all, where memory is"
                    + " not per socket), so " + memoryMiB + " per task can never be placed"));
        }
    }

    private static String gpuModel(Object value, String path, ClusterLimits limits, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String model)) {
            errors.add(new FieldError(path, "must be a string"));
            return null;
        }
        if (!limits.maxGpusPerNodeByModel().containsKey(model)) {
            errors.add(new FieldError(path, "unknown GPU model '" + model + "'; "
                    + (limits.maxGpusPerNodeByModel().isEmpty() ? "no GPU models are registered"
                    : "known models: " + limits.knownModels())));
            return null;
        }
        return model;
    }

    private static List<String> command(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            errors.add(new FieldError(path, "is required"));
            return null;
        }
        if (!(value instanceof List<?> list)) {
            errors.add(new FieldError(path, "must be an array of strings"));
            return null;
        }
        if (list.isEmpty()) {
            errors.add(new FieldError(path, "must not be empty"));
            return null;
        }
        List<String> command = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            Object arg = list.get(i);
            if (!(arg instanceof String s)) {
                errors.add(new FieldError(path + "[" + i + "]", "must be a string"));
            } else if (s.isBlank()) {
                errors.add(new FieldError(path + "[" + i + "]", "must not be blank"));
            } else if (argumentProblem(s) != null) {
                errors.add(new FieldError(path + "[" + i + "]", argumentProblem(s)));
            } else {
                command.add(s);
            }
        }
        return command.size() == list.size() ? command : null;
    }

    private static Integer cpus(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Number n)) {
            errors.add(new FieldError(path, "must be a number"));
            return null;
        }
        BigDecimal cores = decimal(n);
        if (cores == null) {
            errors.add(new FieldError(path, "must be a finite number"));
            return null;
        }
        if (cores.signum() <= 0) {
            errors.add(new FieldError(path, "must be > 0"));
            return null;
        }
        BigDecimal millis = cores.multiply(THOUSAND).stripTrailingZeros();
        if (millis.scale() > 0) {
            errors.add(new FieldError(path, "must be a whole number of millicores (at most 3 decimal places)"));
            return null;
        }
        if (millis.compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0) {
            errors.add(new FieldError(path, "must be at most " + Integer.MAX_VALUE / 1000 + " cores"));
            return null;
        }
        return millis.intValueExact();
    }

    static String name(Object value, String path, List<FieldError> errors) {
        if (value == null) {
            errors.add(new FieldError(path, "is required"));
            return null;
        }
        if (!(value instanceof String name)) {
            errors.add(new FieldError(path, "must be a string"));
            return null;
        }
        if (!hasVisibleCharacter(name)) {
            errors.add(new FieldError(path, "must not be blank"));
            return null;
        }
        String problem = nameProblem(name);
        if (problem != null) {
            errors.add(new FieldError(path, problem));
            return null;
        }
        if (name.length() > MAX_NAME_LENGTH) {
            errors.add(new FieldError(path, "must be at most " + MAX_NAME_LENGTH + " characters, not "
                    + name.length()));
            return null;
        }
        return name;
    }

    /** Why a name cannot be stored or shown faithfully (control, invisible formatting, broken UTF-16), or null. */
    private static String nameProblem(String s) {
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (Character.isSurrogate((char) cp)) {
                return "must not contain an unpaired surrogate (at index " + i + ")";
            }
            int type = Character.getType(cp);
            if (type == Character.CONTROL || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR) {
                return "must not contain control character " + codePoint(cp);
            }
            if (type == Character.FORMAT && cp != ZERO_WIDTH_JOINER) {
                return "must not contain invisible formatting character " + codePoint(cp);
            }
            i += Character.charCount(cp);
        }
        return null;
    }

    /** Command arguments may hold any text a process accepts: everything but NUL and broken UTF-16. */
    private static String argumentProblem(String s) {
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (cp == 0) {
                return "must not contain a NUL character (U+0000): no process can receive it";
            }
            if (Character.isSurrogate((char) cp)) {
                return "must not contain an unpaired surrogate (at index " + i + ")";
            }
            i += Character.charCount(cp);
        }
        return null;
    }

    /** Something a reader can see: not white space, not a format or control character, not a blank filler. */
    private static boolean hasVisibleCharacter(String s) {
        return s.codePoints().anyMatch(cp -> !Character.isWhitespace(cp) && !Character.isSpaceChar(cp)
                && Character.getType(cp) != Character.FORMAT && Character.getType(cp) != Character.CONTROL
                && !BLANK_LOOKING.contains(cp));
    }

    private static String codePoint(int cp) {
        return String.format(java.util.Locale.ROOT, "U+%04X", cp);
    }

    /** An integer within [min, max], or null (absent, or reported bad). */
    private static Long integer(Object value, String path, long min, long max, String rangeMessage,
                                List<FieldError> errors) {
        if (value == null) {
            return null;
        }
        BigDecimal d = value instanceof Number n ? decimal(n) : null;
        if (d == null || d.stripTrailingZeros().scale() > 0) {
            errors.add(new FieldError(path, "must be an integer"));
            return null;
        }
        if (d.compareTo(BigDecimal.valueOf(min)) < 0 || d.compareTo(BigDecimal.valueOf(max)) > 0) {
            errors.add(new FieldError(path, rangeMessage));
            return null;
        }
        return d.longValueExact();
    }

    private static void unknownFields(Map<?, ?> object, Set<String> known, String prefix, List<FieldError> errors) {
        for (Object key : object.keySet()) {
            if (!known.contains(String.valueOf(key))) {
                errors.add(new FieldError(prefix + key, "unknown field"));
            }
        }
    }

    /** Any JSON number as an exact decimal; null for NaN or infinity (which JSON cannot carry anyway). */
    private static BigDecimal decimal(Number n) {
        if (n instanceof BigDecimal b) {
            return b;
        }
        if (n instanceof Double || n instanceof Float) {
            double d = n.doubleValue();
            return Double.isFinite(d) ? new BigDecimal(n.toString()) : null;
        }
        try {
            return new BigDecimal(n.toString());
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
