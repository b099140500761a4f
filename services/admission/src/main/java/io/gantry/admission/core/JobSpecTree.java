package io.gantry.admission.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A spec back as a JSON tree in the shape a tenant submits it, with every default filled in. It is what GET
 * shows and, serialized, what an idempotent resubmission is compared against; the validator accepts it and
 * gives back the same spec.
 */
public final class JobSpecTree {
    private JobSpecTree() {
    }

    public static Map<String, Object> toTree(JobSpec spec) {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("name", spec.name());
        job.put("priority", spec.priority());
        if (spec.timeLimitSeconds() != null) {
            job.put("timeLimitSeconds", spec.timeLimitSeconds());
        }
        if (spec.queue() != null) {
            job.put("queue", spec.queue());
        }
        if (spec.priorityClass() != null) {
            job.put("priorityClass", spec.priorityClass());
        }
        if (spec.placementPolicy() != null) {
            job.put("placementPolicy", spec.placementPolicy());
        }
        if (spec.pool() != null) {
            job.put("pool", spec.pool());
        }
        if (spec.checkpoint() != null) {
            Map<String, Object> checkpoint = new LinkedHashMap<>();
            checkpoint.put("dir", spec.checkpoint().dir());
            if (spec.checkpoint().intervalSeconds() != null) {
                checkpoint.put("intervalSeconds", spec.checkpoint().intervalSeconds());
            }
            job.put("checkpoint", checkpoint);
        }
        if (spec.successPolicy() != null) {
            job.put("successPolicy", Map.of("leader", spec.successPolicy().leader()));
        }
        if (spec.retry() != null) {
            Map<String, Object> retry = new LinkedHashMap<>();
            retry.put("maxRetries", spec.retry().maxRetries());
            retry.put("backoffSeconds", spec.retry().backoffSeconds());
            job.put("retry", retry);
        }
        if (!spec.dependencies().isEmpty()) {
            List<Object> dependencies = new ArrayList<>();
            for (JobSpec.Dependency d : spec.dependencies()) {
                Map<String, Object> dep = new LinkedHashMap<>();
                dep.put("jobId", d.jobId());
                dep.put("condition", d.condition());
                dependencies.add(dep);
            }
            job.put("dependencies", dependencies);
        }
        if (!spec.interactive()) {
            job.put("interactive", false);
        }
        if (spec.suspend()) {
            job.put("suspend", true);
        }
        if (spec.topology() != null) {
            Map<String, Object> topology = new LinkedHashMap<>();
            topology.put("required", spec.topology().required());
            topology.put("preferred", spec.topology().preferred());
            job.put("topology", topology);
        }
        List<Object> tasks = new ArrayList<>();
        for (TaskSpec t : spec.tasks()) {
            Map<String, Object> task = new LinkedHashMap<>();
            task.put("name", t.name());
            task.put("replicas", t.replicas());
            task.put("command", t.command());
            task.put("gpus", t.gpus());
            if (t.gpuModel() != null) {
                task.put("gpuModel", t.gpuModel());
            }
            if (!t.gpuModels().isEmpty()) {
                task.put("gpuModels", t.gpuModels());
            }
            if (t.gpuTier() != null) {
                task.put("gpuTier", t.gpuTier());
            }
            if (t.gpuMilli() != null) {
                task.put("gpuMilli", t.gpuMilli());
            }
            if (t.gpuMemoryMiB() != null) {
                task.put("gpuMemoryMiB", t.gpuMemoryMiB());
            }
            if (t.migProfile() != null) {
                task.put("migProfile", t.migProfile());
            }
            task.put("cpus", cores(t.cpuMillis()));
            task.put("memoryMiB", t.memoryMiB());
            if (t.runSeconds() != null) {
                task.put("runSeconds", t.runSeconds());
            }
            if (!t.env().isEmpty()) {
                task.put("env", new LinkedHashMap<>(t.env()));
            }
            if (t.workingDir() != null) {
                task.put("workingDir", t.workingDir());
            }
            if (t.image() != null) {
                task.put("image", t.image());
            }
            if (!t.mounts().isEmpty()) {
                List<Object> mounts = new ArrayList<>();
                for (TaskSpec.Mount m : t.mounts()) {
                    Map<String, Object> mount = new LinkedHashMap<>();
                    mount.put("mountPath", m.mountPath());
                    if (m.hostPath() != null) {
                        mount.put("hostPath", m.hostPath());
                    }
                    if (m.claim() != null) {
                        mount.put("claim", m.claim());
                    }
                    mount.put("readOnly", m.readOnly());
                    mounts.add(mount);
                }
                task.put("mounts", mounts);
            }
            tasks.add(task);
        }
        job.put("tasks", tasks);
        return job;
    }

    /** Whole cores as an integer, fractions as a plain decimal (never exponent notation). */
    static Number cores(int cpuMillis) {
        if (cpuMillis % 1000 == 0) {
            return cpuMillis / 1000;
        }
        return new BigDecimal(BigDecimal.valueOf(cpuMillis).movePointLeft(3).stripTrailingZeros().toPlainString());
    }
}
