package io.gantry.cli;

import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * Everything the CLI takes from the process it runs in, passed in so tests run it in-process with their own
 * environment, home and streams.
 *
 * @param vars  environment variables (GANTRY_API, GANTRY_TOKEN, GANTRY_CONFIG, GANTRY_DATA_DIR, XDG_CONFIG_HOME)
 * @param home  the user's home directory (for ~/.config/gantry/config.yaml)
 * @param repo  the checkout ./gantry runs from (its .gantry directory is the dev installation), or the working directory
 */
public record Env(Map<String, String> vars, Path home, Path repo, InputStream in, PrintWriter out, PrintWriter err,
                  Clock clock) {
    public Env {
        vars = Map.copyOf(vars);
    }

    public static Env system() {
        String repo = System.getProperty("gantry.repo", ".");
        return new Env(System.getenv(), Path.of(System.getProperty("user.home")),
                Path.of(repo).toAbsolutePath().normalize(), System.in,
                new PrintWriter(System.out, true), new PrintWriter(System.err, true), Clock.systemUTC());
    }

    public String var(String name) {
        String v = vars.get(name);
        return v == null || v.isBlank() ? null : v;
    }
}
