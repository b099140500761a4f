package io.gantry.queue.core;

import java.util.List;

/** The queue configuration is invalid; {@link #problems()} names each offending path, e.g. {@code queues[2].weight}. */
public final class ConfigException extends IllegalArgumentException {
    private final List<String> problems;

    public ConfigException(List<String> problems) {
        super("invalid queue configuration: " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
