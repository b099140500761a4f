package io.gantry.admission.core;

import java.util.List;

/** The validator's answer: either a spec or the list of every bad field (never both). */
public record Validated(JobSpec spec, List<FieldError> errors) {
    public Validated {
        errors = List.copyOf(errors);
    }

    static Validated ok(JobSpec spec) {
        return new Validated(spec, List.of());
    }

    static Validated invalid(List<FieldError> errors) {
        return new Validated(null, errors);
    }

    public boolean isValid() {
        return errors.isEmpty();
    }

    /**
     * Refused only because no node has registered yet (a cluster that is starting): nothing is wrong with the
     * request, and it will be accepted once one has ({@link JobSpecValidator#NO_NODES_YET}).
     */
    public boolean waitsForNodes() {
        return !errors.isEmpty() && errors.stream().allMatch(e -> JobSpecValidator.NO_NODES_YET.equals(e.message()));
    }
}
