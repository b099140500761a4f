package io.gantry.placement.backend.slurm;

import java.util.List;

/**
 * The Slurm client commands the backend runs, behind one narrow seam so tests can answer with recorded output.
 * Every call blocks up to the command timeout; the backend only calls it from its own worker thread, never from
 * placement's event loop.
 */
public interface SlurmCommands {

    /** The Slurm client tools used. */
    enum Tool {
        SBATCH("sbatch"), SQUEUE("squeue"), SACCT("sacct"), SCANCEL("scancel"), SCONTROL("scontrol");

        private final String command;

        Tool(String command) {
            this.command = command;
        }

        /** The executable's default name (found on PATH). */
        public String command() {
            return command;
        }
    }

    /**
     * Runs {@code tool args}, feeding {@code stdin} (null: none).
     *
     * @return its standard output
     * @throws SlurmCommandException when it cannot be started, exits non-zero or runs past the timeout
     */
    String run(Tool tool, List<String> args, String stdin) throws SlurmCommandException;

    /** A Slurm command that failed; the message is the tool, its exit and its stderr (never its stdin). */
    final class SlurmCommandException extends Exception {
        private final boolean timedOut;

        public SlurmCommandException(String message, boolean timedOut) {
            super(message);
            this.timedOut = timedOut;
        }

        /** Whether the command ran past its timeout (the controller is down or slow; it may still act on it). */
        public boolean timedOut() {
            return timedOut;
        }
    }
}
