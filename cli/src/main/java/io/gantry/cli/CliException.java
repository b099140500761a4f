package io.gantry.cli;

import java.util.List;

/** A failure the user is told about in words (one or more lines on stderr), with the exit code it stands for. */
public class CliException extends RuntimeException {
    private final int exitCode;
    private final List<String> lines;

    public CliException(int exitCode, String message) {
        this(exitCode, List.of(message));
    }

    public CliException(int exitCode, List<String> lines) {
        super(String.join("\n", lines));
        this.exitCode = exitCode;
        this.lines = List.copyOf(lines);
    }

    public int exitCode() {
        return exitCode;
    }

    public List<String> lines() {
        return lines;
    }
}
