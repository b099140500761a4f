package io.gantry.schemas;

import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a current schema must agree with the released ones, named as schema registries name it: which way data must
 * be readable (current reads released, released reads current, or both) and against which frozen versions (the
 * newest, or every one). {@link #GANTRY} is the mode Gantry keeps; the others exist so tests can show what it adds.
 */
enum CompatibilityMode {
    BACKWARD(true, false, false),
    BACKWARD_TRANSITIVE(true, false, true),
    FORWARD(false, true, false),
    FORWARD_TRANSITIVE(false, true, true),
    FULL(true, true, false),
    FULL_TRANSITIVE(true, true, true);

    /**
     * Gantry's mode, stated once. Backward and transitive: topics are kept forever and services rebuild their state
     * from the first record, so a current schema reads data written with every release. Forward and transitive: one
     * service is upgraded before another (or rolled back), so a schema of any release reads what current writers
     * produce.
     */
    static final CompatibilityMode GANTRY = FULL_TRANSITIVE;

    private final boolean currentReadsReleased;
    private final boolean releasedReadsCurrent;
    private final boolean transitive;

    CompatibilityMode(boolean currentReadsReleased, boolean releasedReadsCurrent, boolean transitive) {
        this.currentReadsReleased = currentReadsReleased;
        this.releasedReadsCurrent = releasedReadsCurrent;
        this.transitive = transitive;
    }

    /** The frozen versions (oldest first) the current schemas are checked against: all of them, or the newest. */
    List<FrozenSchemas.Version> versionsToCheck(List<FrozenSchemas.Version> frozen) {
        if (transitive || frozen.isEmpty()) {
            return frozen;
        }
        return List.of(frozen.get(frozen.size() - 1));
    }

    /** Every way {@code current} (full name to schema) breaks this mode against {@code frozen}; empty if none. */
    List<String> problems(Map<String, Schema> current, List<FrozenSchemas.Version> frozen) {
        List<String> problems = new ArrayList<>();
        for (FrozenSchemas.Version version : versionsToCheck(frozen)) {
            version.schemas().forEach((name, released) ->
                    problems.addAll(problems(name, current.get(name), released, version.name())));
        }
        return problems;
    }

    /**
     * How one current schema breaks this mode against the schema of the same name frozen in {@code version}: one
     * sentence per direction that fails, with Avro's incompatibilities (kind, detail, where in the reader schema).
     *
     * @param current null when the current set no longer has the name
     */
    List<String> problems(String name, Schema current, Schema released, String version) {
        if (current == null) {
            return List.of(name + " is frozen in " + version + " but gone from src/main/avro: a released schema is"
                    + " never removed or renamed");
        }
        List<String> problems = new ArrayList<>();
        if (currentReadsReleased) {
            describe(name + ": the current schema cannot read data written with " + version, current, released)
                    .forEach(problems::add);
        }
        if (releasedReadsCurrent) {
            describe(name + ": " + version + " cannot read data written with the current schema", released, current)
                    .forEach(problems::add);
        }
        return problems;
    }

    private static List<String> describe(String failure, Schema reader, Schema writer) {
        var result = SchemaCompatibility.checkReaderWriterCompatibility(reader, writer).getResult();
        if (result.getCompatibility() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
            return List.of();
        }
        // not getDescription(): it prints both schemas whole, thousands of lines for an envelope
        List<String> details = new ArrayList<>();
        for (Incompatibility i : result.getIncompatibilities()) {
            details.add(i.getType() + " " + i.getMessage() + " at " + i.getLocation());
        }
        return List.of(failure + ": " + String.join("; ", details));
    }
}
