package io.gantry.cli.jobfile;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The shape of a job file, which is the shape of admission's JSON body: field names, types, required fields and
 * the plain bounds. It catches what a person gets wrong while writing the file (a misspelt or unsupported field, a
 * string where a list belongs, a missing command) before anything is sent. Everything that needs the cluster (GPU
 * models, queues, priority classes, whether the gang fits) and the finer rules stay admission's: its answers are
 * shown against the file's lines too, so the two never disagree about what is accepted.
 */
final class JobFileSchema {
    /** Admission's bounds (JobSpecValidator): 366 days, 16 TiB, 1,024 replicas and GPUs per task, 64 task groups. */
    static final long MAX_SECONDS = 366L * 24 * 3600;
    static final long MAX_MEMORY_MIB = 16L * 1024 * 1024;
    static final int MAX_TASK_GROUPS = 64;

    record Violation(String field, String message) {
    }

    private enum Type { STRING, INTEGER, NUMBER, BOOLEAN, STRINGS, OBJECT, TASKS, ENV, MOUNTS, DEPENDENCIES }

    private record Field(Type type, boolean required, long min, long max) {
        static Field of(Type type) {
            return new Field(type, false, Long.MIN_VALUE, Long.MAX_VALUE);
        }

        static Field required(Type type) {
            return new Field(type, true, Long.MIN_VALUE, Long.MAX_VALUE);
        }

        static Field integer(long min, long max) {
            return new Field(Type.INTEGER, false, min, max);
        }
    }

    private static final Map<String, Field> JOB = fields(
            "name", Field.required(Type.STRING),
            "priority", Field.integer(-1000, 1000),
            "timeLimitSeconds", Field.integer(1, MAX_SECONDS),
            "queue", Field.of(Type.STRING),
            "priorityClass", Field.of(Type.STRING),
            "topology", Field.of(Type.OBJECT),
            "placementPolicy", Field.of(Type.STRING),
            "pool", Field.of(Type.STRING),
            "checkpoint", Field.of(Type.OBJECT),
            "successPolicy", Field.of(Type.OBJECT),
            "retry", Field.of(Type.OBJECT),
            "dependencies", Field.of(Type.DEPENDENCIES),
            "suspend", Field.of(Type.BOOLEAN),
            "interactive", Field.of(Type.BOOLEAN),
            "tasks", Field.required(Type.TASKS));
    private static final Map<String, Field> DEPENDENCY = fields(
            "jobId", Field.required(Type.STRING),
            "condition", Field.of(Type.STRING));
    private static final Map<String, Field> SUCCESS_POLICY = fields(
            "leader", Field.required(Type.STRING));
    private static final Map<String, Field> RETRY = fields(
            "maxRetries", Field.integer(0, 10),
            "backoffSeconds", Field.integer(0, 3600));
    private static final Map<String, Field> MOUNT = fields(
            "mountPath", Field.required(Type.STRING),
            "hostPath", Field.of(Type.STRING),
            "claim", Field.of(Type.STRING),
            "readOnly", Field.of(Type.BOOLEAN));
    private static final Map<String, Field> TOPOLOGY = fields(
            "required", Field.of(Type.STRING),
            "preferred", Field.of(Type.STRING));
    private static final Map<String, Field> CHECKPOINT = fields(
            "dir", Field.required(Type.STRING),
            "intervalSeconds", Field.integer(1, MAX_SECONDS));
    private static final Map<String, Field> TASK = fields(
            "name", Field.required(Type.STRING),
            "replicas", Field.integer(1, 1024),
            "command", Field.required(Type.STRINGS),
            "gpus", Field.integer(0, 1024),
            "gpuModel", Field.of(Type.STRING),
            "gpuModels", Field.of(Type.STRINGS),
            "gpuTier", Field.of(Type.STRING),
            "cpus", Field.of(Type.NUMBER),
            "memoryMiB", Field.integer(1, MAX_MEMORY_MIB),
            "runSeconds", Field.integer(1, MAX_SECONDS),
            "gpuMilli", Field.integer(1, 999),
            "gpuMemoryMiB", Field.integer(1, MAX_MEMORY_MIB),
            "migProfile", Field.of(Type.STRING),
            "env", Field.of(Type.ENV),
            "workingDir", Field.of(Type.STRING),
            "image", Field.of(Type.STRING),
            "mounts", Field.of(Type.MOUNTS));
    /** The sub-mappings of a job, by field name. */
    private static final Map<String, Map<String, Field>> OBJECTS = Map.of("topology", TOPOLOGY, "checkpoint",
            CHECKPOINT, "successPolicy", SUCCESS_POLICY, "retry", RETRY);

    /**
     * Fields people expect from other schedulers that the API does not accept yet: named so the message says so
     * instead of guessing at a spelling.
     */
    private static final Map<String, String> NOT_YET = Map.of();

    /** Other schedulers' names for fields Gantry has under another name. */
    private static final Map<String, String> ALIASES = Map.of(
            "retryPolicy", "retry",
            "dependsOn", "dependencies",
            "dependency", "dependencies",
            "suspended", "suspend",
            "backoffLimit", "retry",
            "environment", "env",
            "workdir", "workingDir",
            "workingDirectory", "workingDir",
            "volumes", "mounts",
            "volumeMounts", "mounts");

    private JobFileSchema() {
    }

    private static Map<String, Field> fields(Object... pairs) {
        Map<String, Field> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], (Field) pairs[i + 1]);
        }
        return m;
    }

    static List<Violation> check(Map<String, Object> job) {
        List<Violation> out = new ArrayList<>();
        object(job, "", JOB, out);
        return out;
    }

    private static void object(Map<?, ?> value, String prefix, Map<String, Field> schema, List<Violation> out) {
        for (Object key : value.keySet()) {
            String name = String.valueOf(key);
            if (!schema.containsKey(name)) {
                out.add(new Violation(prefix + name, unknown(name, schema)));
            }
        }
        schema.forEach((name, field) -> {
            Object v = value.get(name);
            String path = prefix + name;
            if (v == null) {
                if (field.required()) {
                    out.add(new Violation(path, "is required"));
                }
                return;
            }
            switch (field.type()) {
                case STRING -> {
                    if (!(v instanceof String s)) {
                        out.add(new Violation(path, "must be text, not " + kind(v) + quoteHint(v)));
                    } else if (field.required() && s.isBlank()) {
                        out.add(new Violation(path, "must not be blank"));
                    }
                }
                case INTEGER -> integer(v, path, field, out);
                case NUMBER -> {
                    if (!(v instanceof Number n) || new BigDecimal(n.toString()).signum() <= 0) {
                        out.add(new Violation(path, "must be a number above 0 (cores; 0.5 = half a core), not "
                                + show(v)));
                    }
                }
                case STRINGS -> strings(v, path, name.equals("command"), out);
                case OBJECT -> {
                    if (!(v instanceof Map<?, ?> m)) {
                        out.add(new Violation(path, "must be a mapping, not " + kind(v)));
                    } else {
                        object(m, path + ".", OBJECTS.get(name), out);
                    }
                }
                case TASKS -> tasks(v, path, out);
                case BOOLEAN -> {
                    if (!(v instanceof Boolean)) {
                        out.add(new Violation(path, "must be true or false, not " + show(v)));
                    }
                }
                case ENV -> env(v, path, out);
                case MOUNTS -> mounts(v, path, out);
                case DEPENDENCIES -> dependencies(v, path, out);
            }
        });
    }

    private static void tasks(Object v, String path, List<Violation> out) {
        if (!(v instanceof List<?> list)) {
            out.add(new Violation(path, "must be a list of task groups (- name: worker ...), not " + kind(v)));
            return;
        }
        if (list.isEmpty()) {
            out.add(new Violation(path, "must contain at least one task group"));
        } else if (list.size() > MAX_TASK_GROUPS) {
            out.add(new Violation(path, "must contain at most " + MAX_TASK_GROUPS + " task groups, not " + list.size()));
        }
        Map<String, Integer> seen = new LinkedHashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String p = path + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> task)) {
                out.add(new Violation(p, "must be a mapping (name, command, replicas, gpus, ...), not "
                        + kind(list.get(i))));
                continue;
            }
            object(task, p + ".", TASK, out);
            if (task.get("name") instanceof String n) {
                Integer first = seen.putIfAbsent(n, i);
                if (first != null) {
                    out.add(new Violation(p + ".name", "duplicate task name '" + n + "' (also tasks[" + first + "])"));
                }
            }
        }
    }

    /** Variable names to text; the names' rules (reserved names, characters) are admission's. */
    private static void env(Object v, String path, List<Violation> out) {
        if (!(v instanceof Map<?, ?> env)) {
            out.add(new Violation(path, "must be a mapping of variable names to text (FOO: bar), not " + kind(v)));
            return;
        }
        env.forEach((name, value) -> {
            if (!(value instanceof String)) {
                out.add(new Violation(path + "." + name, "must be text, not " + kind(value)
                        + (value == null ? " (write \"\" for an empty value)" : quoteHint(value))));
            }
        });
    }

    /** Jobs waited for; whether they exist and are the tenant's is admission's to say. */
    private static void dependencies(Object v, String path, List<Violation> out) {
        if (!(v instanceof List<?> list)) {
            out.add(new Violation(path, "must be a list of jobs waited for (- jobId: j-1, condition: afterok), not "
                    + kind(v)));
            return;
        }
        for (int i = 0; i < list.size(); i++) {
            String p = path + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> dep)) {
                out.add(new Violation(p, "must be a mapping (jobId, condition: afterok | afterany | afternotok), not "
                        + kind(list.get(i))));
                continue;
            }
            object(dep, p + ".", DEPENDENCY, out);
        }
    }

    private static void mounts(Object v, String path, List<Violation> out) {
        if (!(v instanceof List<?> list)) {
            out.add(new Violation(path, "must be a list of mounts (- mountPath: /data, claim: datasets), not "
                    + kind(v)));
            return;
        }
        for (int i = 0; i < list.size(); i++) {
            String p = path + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> mount)) {
                out.add(new Violation(p, "must be a mapping (mountPath, hostPath or claim, readOnly), not "
                        + kind(list.get(i))));
                continue;
            }
            object(mount, p + ".", MOUNT, out);
            if ((mount.get("hostPath") == null) == (mount.get("claim") == null)) {
                out.add(new Violation(p + ".hostPath", "give exactly one of hostPath and claim"));
            }
        }
    }

    private static void integer(Object v, String path, Field field, List<Violation> out) {
        boolean whole = v instanceof Long || v instanceof BigInteger;
        if (!whole && v instanceof BigDecimal d) {
            whole = d.stripTrailingZeros().scale() <= 0;
        }
        String range = "a whole number from " + field.min() + " to " + field.max();
        if (!whole) {
            out.add(new Violation(path, "must be " + range + ", not " + show(v)));
            return;
        }
        BigInteger n = v instanceof BigDecimal d ? d.toBigIntegerExact() : new BigInteger(v.toString());
        if (n.compareTo(BigInteger.valueOf(field.min())) < 0 || n.compareTo(BigInteger.valueOf(field.max())) > 0) {
            out.add(new Violation(path, "must be " + range + ", not " + n));
        }
    }

    private static void strings(Object v, String path, boolean command, List<Violation> out) {
        if (!(v instanceof List<?> list)) {
            out.add(new Violation(path, command
                    ? "must be a list of arguments, e.g. [python, train.py] (a shell line: [sh, -c, \"...\"])"
                    : "must be a list, e.g. [H100, A100]"));
            return;
        }
        if (list.isEmpty()) {
            out.add(new Violation(path, "must not be empty"));
        }
        for (int i = 0; i < list.size(); i++) {
            Object item = list.get(i);
            if (!(item instanceof String)) {
                out.add(new Violation(path + "[" + i + "]", "must be text, not " + kind(item) + quoteHint(item)));
            } else if (command && ((String) item).isBlank()) {
                out.add(new Violation(path + "[" + i + "]", "must not be blank"));
            }
        }
    }

    private static String unknown(String name, Map<String, Field> schema) {
        if (NOT_YET.containsKey(name)) {
            return "is not accepted: the Gantry API does not support " + NOT_YET.get(name) + " yet";
        }
        if (ALIASES.containsKey(name) && schema.containsKey(ALIASES.get(name))) {
            return "unknown field; did you mean `" + ALIASES.get(name) + "`?";
        }
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : schema.keySet()) {
            int d = distance(name.toLowerCase(Locale.ROOT), known.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = known;
            }
        }
        String hint = best != null && bestDistance <= Math.max(2, name.length() / 3) ? "; did you mean `" + best + "`?"
                : "; known fields: " + String.join(", ", schema.keySet());
        return "unknown field" + hint;
    }

    /** Levenshtein distance: enough to catch `gpu`, `replica`, `memoryMib`. */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** YAML reads yes/no/on/off and bare numbers as non-text; quoting keeps them text. */
    private static String quoteHint(Object v) {
        return v instanceof Boolean || v instanceof Number ? " (quote it to keep it text)" : "";
    }

    private static String show(Object v) {
        if (v instanceof String s) {
            return "\"" + s + "\"";
        }
        return v instanceof Number || v instanceof Boolean ? v.toString() : kind(v);
    }

    static String kind(Object v) {
        if (v == null) {
            return "nothing";
        }
        if (v instanceof Map<?, ?>) {
            return "a mapping";
        }
        if (v instanceof List<?>) {
            return "a list";
        }
        if (v instanceof Boolean) {
            return "true/false";
        }
        if (v instanceof Number) {
            return "a number";
        }
        return "text";
    }
}
