package io.gantry.cli;

import io.gantry.cli.api.ApiClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "login", mixinStandardHelpOptions = true,
        description = {"Store the API URL and a token in the config file (readable only by you), "
        + "after checking the API accepts it.",
        "The token is read from the terminal without echo, or from standard input (--token-stdin); --dev takes the "
                + "dev tenant's token of this checkout's `./gantry dev`. It is never printed."})
final class LoginCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Option(names = "--token-stdin", description = "read the token from standard input (for scripts)")
    boolean tokenStdin;

    @Option(names = "--dev", description = "the dev installation (.gantry, or GANTRY_DATA_DIR): its tenant token "
            + "and its runs directory")
    boolean dev;

    @Override
    public Integer call() throws IOException {
        Env env = root.env();
        Path file = CliConfig.fileOf(env, root.configFile);
        Map<String, String> values = new LinkedHashMap<>(Files.isRegularFile(file) ? CliConfig.read(file) : Map.of());
        String token;
        if (dev) {
            Path data = CliConfig.devDataDir(env);
            token = CliConfig.devTenantToken(data.resolve("tokens.yml"));
            if (token == null) {
                throw new CliException(ExitCode.AUTH, "no dev installation at " + data + " (start one with "
                        + "`./gantry dev`, or set GANTRY_DATA_DIR)");
            }
            values.put("runs-dir", data.resolve("runs").toString());
        } else {
            token = readToken(env);
        }
        String api = root.api != null ? root.api
                : env.var("GANTRY_API") != null ? env.var("GANTRY_API") : values.getOrDefault("api", CliConfig.DEFAULT_API);
        values.put("api", api);
        values.put("token", token);
        // check before storing: a token the API refuses is not kept
        CliConfig candidate = CliConfig.of(api, token, "the login command", file);
        new ApiClient(candidate).get(ApiClient.Service.ADMISSION, "/v1/jobs?limit=1");
        CliConfig.write(file, values);
        env.out().println("logged in to " + api + "; configuration written to " + file + " (readable only by you)");
        return ExitCode.OK;
    }

    private String readToken(Env env) throws IOException {
        String token;
        Console console = System.console();
        if (!tokenStdin && console != null && env.in() == System.in) {
            char[] chars = console.readPassword("API token: ");
            token = chars == null ? null : new String(chars);
        } else {
            token = new BufferedReader(new InputStreamReader(env.in(), StandardCharsets.UTF_8)).readLine();
        }
        if (token == null || token.isBlank()) {
            throw new CliException(ExitCode.INVALID, "no token given (type it, or pipe it with --token-stdin)");
        }
        return token.trim();
    }
}
