package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.nio.file.Path;

/** {@code gantry}: the command line of a Gantry user. Every subcommand is a client of the REST API. */
@Command(name = "gantry", mixinStandardHelpOptions = true, version = "gantry CLI 0.1.0",
        description = "Submit and follow jobs on a Gantry cluster.",
        synopsisSubcommandLabel = "COMMAND",
        subcommands = {LoginCommand.class, SubmitCommand.class, PsCommand.class, WatchCommand.class,
                LogsCommand.class, CancelCommand.class, SuspendCommand.Suspend.class, SuspendCommand.Resume.class,
                WhyCommand.class, QueuesCommand.class, NodesCommand.class,
                UsageCommand.class, CostsCommand.class, CheckpointsCommand.class, InvoicesCommand.class, AdminCommand.class, CompletionCommand.class},
        footer = {"", "Configuration: ~/.config/gantry/config.yaml (`gantry login`), GANTRY_API, GANTRY_TOKEN; "
                + "without them the dev installation of this checkout (.gantry/tokens.yml) is used.",
                "Exit codes: 0 ok, 1 error, 2 invalid input, 3 not authenticated/allowed, 4 not found, "
                        + "5 conflict, 6 unavailable, 7 job failed, 8 job cancelled, 9 timeout, 10 budget exhausted, "
                        + "11 limited (submitting too fast, or too many jobs open)."})
public final class Cli implements Runnable {
    @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, paramLabel = "FORMAT",
            description = "table (default), wide, json or yaml", converter = FormatConverter.class)
    Output.Format output;

    @Option(names = "--api", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "admission's URL (default from the config file, else " + CliConfig.DEFAULT_API + ")")
    String api;

    @Option(names = "--config", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "config file (default ~/.config/gantry/config.yaml; env GANTRY_CONFIG)")
    Path configFile;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final Env env;
    private CliConfig config;
    private ApiClient client;

    public Cli(Env env) {
        this.env = env;
    }

    /** Runs one command line and returns the exit code ({@link ExitCode}). */
    public static int run(Env env, String... args) {
        CommandLine cl = new CommandLine(new Cli(env));
        cl.setOut(env.out());
        cl.setErr(env.err());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof CliException e) {
                e.lines().forEach(l -> env.err().println("gantry: " + l));
                env.err().flush();
                return e.exitCode();
            }
            env.err().println("gantry: unexpected error: " + ex);
            env.err().flush();
            return ExitCode.ERROR;
        });
        int code = cl.execute(args);
        env.out().flush();
        env.err().flush();
        return code;
    }

    @Override
    public void run() {
        spec.commandLine().usage(env.err());
        throw new CliException(ExitCode.INVALID, "name a command (gantry --help lists them)");
    }

    public Env env() {
        return env;
    }

    public CliConfig config() {
        if (config == null) {
            config = CliConfig.resolve(env, api, configFile);
        }
        return config;
    }

    public ApiClient client() {
        if (client == null) {
            client = new ApiClient(config());
        }
        return client;
    }

    public Output output() {
        return new Output(output == null ? Output.Format.TABLE : output, env.out());
    }

    static final class FormatConverter implements CommandLine.ITypeConverter<Output.Format> {
        @Override
        public Output.Format convert(String value) {
            try {
                return Output.Format.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** GET /v1/jobs/{id}. */
    public JsonNode job(String id) {
        return client().get(ApiClient.Service.ADMISSION, "/v1/jobs/" + ApiClient.encode(id));
    }
}
