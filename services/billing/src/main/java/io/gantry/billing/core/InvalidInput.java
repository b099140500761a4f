package io.gantry.billing.core;

import java.util.List;

/** Input the core refuses, with every bad field named (the HTTP adapter answers it as a 4xx problem). */
public final class InvalidInput extends IllegalArgumentException {
    /** One bad field: a path like {@code gpu[0].perGpuHour} and what is wrong with it. */
    public record Field(String field, String message) {
    }

    private final transient List<Field> fields;

    public InvalidInput(List<Field> fields) {
        super(fields.isEmpty() ? "invalid" : fields.get(0).field() + ": " + fields.get(0).message()
                + (fields.size() > 1 ? " (and " + (fields.size() - 1) + " more)" : ""));
        this.fields = List.copyOf(fields);
    }

    public static InvalidInput of(String field, String message) {
        return new InvalidInput(List.of(new Field(field, message)));
    }

    public List<Field> fields() {
        return fields;
    }
}
