package io.gantry.admission.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A run's report that it committed a checkpoint: its progress counter, where the checkpoint is, and optionally its
 * size and how long saving took. {@link #parse} turns the JSON body into one, or into every bad field.
 *
 * @param step       the job's own progress counter (step, epoch, ...), 0 to 2^53 - 1
 * @param path       an absolute path, under the job's checkpoint directory when it declares one
 * @param sizeBytes  its size, or null
 * @param saveMillis how long saving took, or null
 */
public record CheckpointReport(long step, String path, Long sizeBytes, Long saveMillis) {
    public static final long MAX_STEP = (1L << 53) - 1;
    private static final Set<String> FIELDS = Set.of("step", "path", "sizeBytes", "saveSeconds");

    /** A report, or the reasons there is none. */
    public record Parsed(CheckpointReport report, List<FieldError> errors) {
        public boolean isValid() {
            return report != null;
        }
    }

    /** @param declared the job's checkpoint directory and interval, or null when it declares none */
    public static Parsed parse(Object tree, JobSpec.Checkpoint declared) {
        List<FieldError> errors = new ArrayList<>();
        if (!(tree instanceof Map<?, ?> body)) {
            return new Parsed(null, List.of(new FieldError("body", "must be a JSON object")));
        }
        for (Object key : body.keySet()) {
            if (!FIELDS.contains(String.valueOf(key))) {
                errors.add(new FieldError(String.valueOf(key), "unknown field"));
            }
        }
        Long step = null;
        if (body.get("step") == null) {
            errors.add(new FieldError("step", "is required"));
        } else {
            step = whole(body.get("step"), "step", 0, MAX_STEP, errors);
        }
        String path = null;
        if (body.get("path") == null) {
            errors.add(new FieldError("path", "is required"));
        } else {
            path = JobSpecValidator.absolutePath(body.get("path"), "path", errors);
            if (path != null && declared != null && !under(path, declared.dir())) {
                errors.add(new FieldError("path", "must be under the job's checkpoint directory " + declared.dir()));
                path = null;
            }
        }
        Long size = body.get("sizeBytes") == null ? null
                : whole(body.get("sizeBytes"), "sizeBytes", 0, Long.MAX_VALUE / 2, errors);
        Long saveMillis = null;
        if (body.get("saveSeconds") != null) {
            BigDecimal seconds = decimal(body.get("saveSeconds"));
            if (seconds == null || seconds.signum() < 0
                    || seconds.compareTo(BigDecimal.valueOf(JobSpecValidator.MAX_SECONDS)) > 0) {
                errors.add(new FieldError("saveSeconds", "must be a number of seconds between 0 and "
                        + JobSpecValidator.MAX_SECONDS));
            } else {
                saveMillis = seconds.movePointRight(3).setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
            }
        }
        if (!errors.isEmpty()) {
            return new Parsed(null, List.copyOf(errors));
        }
        return new Parsed(new CheckpointReport(step, path, size, saveMillis), List.of());
    }

    /** The event id of this report by {@code attempt} of {@code jobId}: a retried report is the same fact. */
    public String eventId(String jobId, int attempt) {
        return java.util.UUID.nameUUIDFromBytes(("CheckpointCommitted\u0000" + jobId + "\u0000" + attempt + "\u0000"
                + step + "\u0000" + path).getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString();
    }

    private static boolean under(String path, String dir) {
        String base = dir.endsWith("/") ? dir : dir + "/";
        return path.equals(dir) || path.startsWith(base);
    }

    private static Long whole(Object value, String field, long min, long max, List<FieldError> errors) {
        BigDecimal d = decimal(value);
        if (d == null || d.stripTrailingZeros().scale() > 0) {
            errors.add(new FieldError(field, "must be an integer"));
            return null;
        }
        if (d.compareTo(BigDecimal.valueOf(min)) < 0 || d.compareTo(BigDecimal.valueOf(max)) > 0) {
            errors.add(new FieldError(field, "must be between " + min + " and " + max));
            return null;
        }
        return d.longValueExact();
    }

    private static BigDecimal decimal(Object value) {
        if (value instanceof BigDecimal b) {
            return b;
        }
        if (value instanceof Number n) {
            try {
                return new BigDecimal(n.toString());
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }
}
