package io.gantry.admission.core;

/** One bad input field: a path such as {@code tasks[0].gpus} and a sentence saying what is wrong. */
public record FieldError(String field, String message) {
}
