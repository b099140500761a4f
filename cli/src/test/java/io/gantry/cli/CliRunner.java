package io.gantry.cli;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/** Runs the CLI in this JVM the way a shell would, with its own environment, and keeps what it printed. */
final class CliRunner {
    record Result(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private final Map<String, String> vars = new LinkedHashMap<>();
    private final Path home;
    private final Path repo;

    CliRunner(Path home, Path repo) {
        this.home = home;
        this.repo = repo;
    }

    CliRunner env(String name, String value) {
        vars.put(name, value);
        return this;
    }

    Result run(String... args) {
        return runWithInput("", args);
    }

    Result runWithInput(String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Env env = new Env(vars, home, repo, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintWriter(out, true), new PrintWriter(err, true), Clock.systemUTC());
        int code = Cli.run(env, args);
        Result result = new Result(code, out.toString(), err.toString());
        // the transcript goes to the surefire output file: what a user would have seen, for a failing test's reader
        System.out.println("$ gantry " + String.join(" ", args) + "\n" + result);
        return result;
    }
}
