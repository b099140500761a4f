package io.gantry.cli;

/** The entry point of the gantry-cli jar ({@code ./gantry submit ...}). */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(Cli.run(Env.system(), args));
    }
}
