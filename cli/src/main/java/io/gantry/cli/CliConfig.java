package io.gantry.cli;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the API is and who the caller is. From, first found wins: the command line ({@code --api}), the environment
 * ({@code GANTRY_API}, {@code GANTRY_TOKEN}), the config file ({@code ~/.config/gantry/config.yaml}), and then the
 * dev installation of the checkout ({@code .gantry/tokens.yml}, the demo tenant, and {@code .gantry/api-url}, where
 * {@code ./gantry dev} listens, whatever its {@code --port}), so {@code ./gantry submit} works right after
 * {@code ./gantry dev}. The other services' URLs are the admission URL's host with its port + 1 (queue),
 * + 2 (placement), + 4 (billing), unless set; a URL without a port (a gateway) serves them all.
 *
 * @param tokenSource where the token came from, to say so when the API refuses it (never the token itself)
 */
public record CliConfig(URI api, URI queueApi, URI placementApi, URI billingApi, String token, String tokenSource,
                        Path runsDir, Path file) {
    static final Set<String> KEYS = Set.of("api", "queue-api", "placement-api", "billing-api", "token", "runs-dir");
    public static final String DEFAULT_API = "http://127.0.0.1:8080";

    @Override
    public String toString() {
        // a record's toString would print the token
        return "CliConfig[api=" + api + ", token from " + tokenSource + "]";
    }

    /** The config file this environment uses: --config, GANTRY_CONFIG, $XDG_CONFIG_HOME/gantry, ~/.config/gantry. */
    public static Path fileOf(Env env, Path flag) {
        if (flag != null) {
            return flag;
        }
        if (env.var("GANTRY_CONFIG") != null) {
            return Path.of(env.var("GANTRY_CONFIG"));
        }
        Path base = env.var("XDG_CONFIG_HOME") != null ? Path.of(env.var("XDG_CONFIG_HOME"))
                : env.home().resolve(".config");
        return base.resolve("gantry").resolve("config.yaml");
    }

    /** The dev installation's data directory: GANTRY_DATA_DIR, else .gantry in the checkout. */
    public static Path devDataDir(Env env) {
        return env.var("GANTRY_DATA_DIR") != null ? Path.of(env.var("GANTRY_DATA_DIR"))
                : env.repo().resolve(".gantry");
    }

    /** The file where {@code ./gantry dev} writes the API URL it serves, in its data directory. */
    public static final String DEV_API_FILE = "api-url";

    public static CliConfig resolve(Env env, String apiFlag, Path configFlag) {
        Path file = fileOf(env, configFlag);
        Map<String, String> values = Files.isRegularFile(file) ? read(file) : Map.of();
        Path devApi = devDataDir(env).resolve(DEV_API_FILE);
        String dev = devApi(devApi);
        String api = first(apiFlag, env.var("GANTRY_API"), values.get("api"), dev, DEFAULT_API);
        URI base = url(api, apiFlag != null ? "--api" : env.var("GANTRY_API") != null ? "GANTRY_API"
                : values.get("api") != null || dev == null ? file.toString() : devApi.toString());
        String token = env.var("GANTRY_TOKEN");
        String source = "GANTRY_TOKEN";
        if (token == null && values.get("token") != null) {
            token = values.get("token");
            source = file.toString();
        }
        Path dataDir = devDataDir(env);
        if (token == null) {
            Path tokens = dataDir.resolve("tokens.yml");
            token = devTenantToken(tokens);
            source = tokens.toString();
        }
        Path runs = values.get("runs-dir") != null ? Path.of(values.get("runs-dir")) : dataDir.resolve("runs");
        return new CliConfig(base,
                derived(values.get("queue-api"), base, 1), derived(values.get("placement-api"), base, 2),
                derived(values.get("billing-api"), base, 4), token, token == null ? null : source, runs, file);
    }

    /** The URL the dev installation serves (its first line), or null when it wrote none. */
    private static String devApi(Path f) {
        try {
            return Files.isRegularFile(f) ? Files.readAllLines(f).stream().map(String::strip).filter(l -> !l.isEmpty())
                    .findFirst().orElse(null) : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** A configuration for one URL and token alone (what `login` checks before it stores them). */
    static CliConfig of(String api, String token, String tokenSource, Path file) {
        URI base = url(api, "--api");
        return new CliConfig(base, derived(null, base, 1), derived(null, base, 2), derived(null, base, 4), token,
                tokenSource, null, file);
    }

    private static URI derived(String set, URI base, int offset) {
        if (set != null) {
            return url(set, "config");
        }
        if (base.getPort() < 0) {
            return base;
        }
        return URI.create(base.getScheme() + "://" + base.getHost() + ":" + (base.getPort() + offset)
                + (base.getPath() == null ? "" : base.getPath()));
    }

    private static URI url(String text, String where) {
        try {
            URI u = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
            if (u.getScheme() == null || u.getHost() == null || !List.of("http", "https").contains(u.getScheme())) {
                throw new IllegalArgumentException();
            }
            return u;
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCode.INVALID, "the API URL from " + where + " must look like "
                    + "http://host:8080, not " + text);
        }
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }

    static Map<String, String> read(Path file) {
        Object tree;
        try {
            tree = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            throw new CliException(ExitCode.INVALID, file + ": cannot be read as YAML: " + e.getMessage());
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (tree == null) {
            return out;
        }
        if (!(tree instanceof Map<?, ?> m)) {
            throw new CliException(ExitCode.INVALID, file + ": must be a mapping of " + KEYS);
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            String key = String.valueOf(e.getKey());
            if (!KEYS.contains(key)) {
                throw new CliException(ExitCode.INVALID, file + ": unknown key `" + key + "` (known: "
                        + String.join(", ", KEYS.stream().sorted().toList()) + ")");
            }
            if (e.getValue() != null) {
                out.put(key, String.valueOf(e.getValue()));
            }
        }
        return out;
    }

    /** The first tenant (non-admin) token of a tokens file as `gantry dev` writes it, or null. */
    static String devTenantToken(Path tokensFile) {
        if (!Files.isRegularFile(tokensFile)) {
            return null;
        }
        try {
            Object tree = new Yaml(new SafeConstructor(new LoaderOptions()))
                    .load(Files.readString(tokensFile, StandardCharsets.UTF_8));
            if (tree instanceof Map<?, ?> m && m.get("tokens") instanceof List<?> list) {
                for (Object o : list) {
                    if (o instanceof Map<?, ?> t && !"admin".equals(t.get("role")) && t.get("token") != null) {
                        return String.valueOf(t.get("token"));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    /** Writes the config file readable by its owner only (it holds a token). */
    public static void write(Path file, Map<String, String> values) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        StringBuilder text = new StringBuilder("# gantry CLI configuration (written by `gantry login`); keep it private\n");
        values.forEach((k, v) -> {
            if (v != null) {
                text.append(k).append(": ").append(quote(v)).append('\n');
            }
        });
        Path tmp = Files.createTempFile(dir, ".config", ".tmp");
        try {
            try {
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException ignored) {
                // not a POSIX file system
            }
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static String quote(String v) {
        return "'" + v.replace("'", "''") + "'";
    }
}
