package io.gantry.admission.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Fluent builders for JSON trees of job specs, as Micronaut's JsonMapper would hand them to the validator. */
final class SpecTrees {
    private SpecTrees() {
    }

    static JobTree aJob() {
        return new JobTree().set("name", "train-resnet").task(aTask("worker"));
    }

    static TaskTree aTask(String name) {
        return new TaskTree().set("name", name).set("command", List.of("python", "train.py"));
    }

    static final class JobTree {
        private final Map<String, Object> fields = new LinkedHashMap<>();
        private final List<Object> tasks = new ArrayList<>();
        private boolean tasksSet = true;

        JobTree set(String field, Object value) {
            fields.put(field, value);
            return this;
        }

        JobTree without(String field) {
            if (field.equals("tasks")) {
                tasksSet = false;
            }
            fields.remove(field);
            return this;
        }

        JobTree task(TaskTree task) {
            tasks.add(task.build());
            return this;
        }

        JobTree noTasks() {
            tasks.clear();
            return this;
        }

        JobTree rawTask(Object task) {
            tasks.add(task);
            return this;
        }

        Map<String, Object> build() {
            Map<String, Object> m = new LinkedHashMap<>(fields);
            if (tasksSet && !m.containsKey("tasks")) {
                m.put("tasks", new ArrayList<>(tasks));
            }
            return m;
        }
    }

    static final class TaskTree {
        private final Map<String, Object> fields = new LinkedHashMap<>();

        TaskTree set(String field, Object value) {
            fields.put(field, value);
            return this;
        }

        TaskTree without(String field) {
            fields.remove(field);
            return this;
        }

        TaskTree gpus(int n) {
            return set("gpus", n);
        }

        TaskTree model(String m) {
            return set("gpuModel", m);
        }

        Map<String, Object> build() {
            return new LinkedHashMap<>(fields);
        }
    }

    /** A cluster of nodes, each given as its GPU models ("H100" x 8 -> one node with 8 H100s). */
    static ClusterLimits cluster(List<List<String>> nodes) {
        NodeCatalog catalog = new NodeCatalog();
        for (int i = 0; i < nodes.size(); i++) {
            catalog.register("node-" + i, nodes.get(i));
        }
        return catalog.limits();
    }

    static List<String> gpus(int n, String model) {
        return java.util.Collections.nCopies(n, model);
    }
}
