package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * {@code gantry admin}: what an operator with an admin token does. Tenants and their API tokens live in admission
 * (which tells every service); queues, and so which tenant a queue belongs to, live in the queue configuration.
 */
@Command(name = "admin", mixinStandardHelpOptions = true, synopsisSubcommandLabel = "COMMAND",
        description = "Operator commands (an admin token): tenants, API tokens, the queue configuration.",
        subcommands = {AdminCommand.Tenants.class, AdminCommand.Tokens.class, AdminCommand.QueueConfig.class})
final class AdminCommand implements Runnable {
    @ParentCommand
    Cli root;

    @Override
    public void run() {
        throw new CliException(ExitCode.INVALID, "name an admin command: tenants, tokens or queue-config "
                + "(gantry admin --help)");
    }

    @Command(name = "tenants", mixinStandardHelpOptions = true, synopsisSubcommandLabel = "COMMAND",
            description = "Create, list, disable and enable tenants. A disabled tenant's tokens stop working "
                    + "everywhere (bootstrap-file tokens too); its jobs are not touched.")
    static final class Tenants implements Runnable {
        @ParentCommand
        AdminCommand admin;

        @Override
        public void run() {
            throw new CliException(ExitCode.INVALID, "name a tenants command: create, list, disable or enable");
        }

        @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a tenant (active).")
        int create(@Parameters(paramLabel = "NAME", description = "lower-case letters, digits and '-'") String name,
                   @Option(names = "--display-name", paramLabel = "TEXT") String displayName) {
            ObjectNode body = ApiClient.JSON.createObjectNode().put("name", name);
            if (displayName != null) {
                body.put("displayName", displayName);
            }
            JsonNode t = admin.root.client().post(ApiClient.Service.ADMISSION, "/v1/admin/tenants", body.toString(),
                    java.util.Map.of());
            admin.root.output().show(t, () -> "tenant " + t.path("name").asText() + " created ("
                    + t.path("state").asText().toLowerCase() + "); give it a queue with `gantry admin queue-config`\n");
            return ExitCode.OK;
        }

        @Command(name = "list", mixinStandardHelpOptions = true,
                description = "Every tenant: those made through the admin API and those of the tokens file.")
        int list() {
            JsonNode answer = admin.root.client().get(ApiClient.Service.ADMISSION, "/v1/admin/tenants");
            admin.root.output().show(answer, () -> {
                Table t = new Table("TENANT", "STATE", "DISPLAY NAME", "CREATED");
                for (JsonNode n : answer.path("tenants")) {
                    t.row(n.path("name").asText(), n.path("state").asText(), JobText.text(n, "displayName"),
                            n.hasNonNull("createdAt") ? n.path("createdAt").asText()
                                    : "tokens-file".equals(n.path("source").asText()) ? "(tokens file)" : "");
                }
                return t.size() == 0 ? "no tenants\n" : t.render();
            });
            return ExitCode.OK;
        }

        @Command(name = "disable", mixinStandardHelpOptions = true,
                description = "Disable a tenant: none of its tokens authenticates any more.")
        int disable(@Parameters(paramLabel = "NAME") String name) {
            return state(name, "disable");
        }

        @Command(name = "enable", mixinStandardHelpOptions = true, description = "Enable a disabled tenant again.")
        int enable(@Parameters(paramLabel = "NAME") String name) {
            return state(name, "enable");
        }

        private int state(String name, String action) {
            JsonNode t = admin.root.client().post(ApiClient.Service.ADMISSION,
                    "/v1/admin/tenants/" + ApiClient.encode(name) + "/" + action, "{}", java.util.Map.of());
            admin.root.output().show(t, () -> "tenant " + name + " is " + t.path("state").asText().toLowerCase()
                    + "\n");
            return ExitCode.OK;
        }
    }

    @Command(name = "tokens", mixinStandardHelpOptions = true, synopsisSubcommandLabel = "COMMAND",
            description = "Issue, list, revoke and rotate a tenant's API tokens. A token is shown once, when it is "
                    + "issued; Gantry keeps only its hash.")
    static final class Tokens implements Runnable {
        @ParentCommand
        AdminCommand admin;

        @Override
        public void run() {
            throw new CliException(ExitCode.INVALID, "name a tokens command: issue, list, revoke or rotate");
        }

        @Command(name = "issue", mixinStandardHelpOptions = true, description = "Issue a new token for a tenant.")
        int issue(@Parameters(paramLabel = "TENANT") String tenant,
                  @Option(names = "--role", paramLabel = "ROLE", defaultValue = "tenant",
                          description = "tenant (default) or admin") String role,
                  @Option(names = "--expires-in", paramLabel = "DURATION", converter = Durations.class,
                          description = "e.g. 30d or 12h (default 90d, at most 365d)") Duration expiresIn,
                  @Option(names = "--label", paramLabel = "TEXT", description = "what the token is for") String label) {
            ObjectNode body = ApiClient.JSON.createObjectNode().put("role", role);
            if (expiresIn != null) {
                body.put("expiresIn", expiresIn.toString());
            }
            if (label != null) {
                body.put("label", label);
            }
            JsonNode t = admin.root.client().post(ApiClient.Service.ADMISSION,
                    "/v1/admin/tenants/" + ApiClient.encode(tenant) + "/tokens", body.toString(), java.util.Map.of());
            showSecret(t);
            return ExitCode.OK;
        }

        @Command(name = "list", mixinStandardHelpOptions = true,
                description = "A tenant's tokens (ids and dates, never the tokens).")
        int list(@Parameters(paramLabel = "TENANT") String tenant) {
            JsonNode answer = admin.root.client().get(ApiClient.Service.ADMISSION,
                    "/v1/admin/tenants/" + ApiClient.encode(tenant) + "/tokens");
            admin.root.output().show(answer, () -> {
                Table t = new Table("TOKEN", "ROLE", "STATE", "LABEL", "CREATED", "EXPIRES", "REVOKED", "REPLACED BY");
                for (JsonNode n : answer.path("tokens")) {
                    t.row(n.path("tokenId").asText(), n.path("role").asText(), n.path("state").asText(),
                            JobText.text(n, "label"), n.path("createdAt").asText(), n.path("expiresAt").asText(),
                            JobText.text(n, "revokedAt"), JobText.text(n, "replacedBy"));
                }
                return t.size() == 0 ? "no tokens\n" : t.render();
            });
            return ExitCode.OK;
        }

        @Command(name = "revoke", mixinStandardHelpOptions = true,
                description = "Revoke a token: every service refuses it within seconds.")
        int revoke(@Parameters(paramLabel = "ID", description = "the token's id (tok_...)") String id) {
            JsonNode t = admin.root.client().post(ApiClient.Service.ADMISSION,
                    "/v1/admin/tokens/" + ApiClient.encode(id) + "/revoke", "{}", java.util.Map.of());
            admin.root.output().show(t, () -> id + " (tenant " + t.path("tenant").asText() + ") revoked at "
                    + t.path("revokedAt").asText() + "\n");
            return ExitCode.OK;
        }

        @Command(name = "rotate", mixinStandardHelpOptions = true,
                description = "Issue a successor (same tenant, role and label) and retire the token: at once, or "
                        + "when the overlap ends.")
        int rotate(@Parameters(paramLabel = "ID") String id,
                   @Option(names = "--overlap", paramLabel = "DURATION", converter = Durations.class,
                           description = "how long the old token keeps working, e.g. 1h (default 0, at most 7d)")
                   Duration overlap) {
            String query = overlap == null ? "" : "?overlap=" + ApiClient.encode(overlap.toString());
            JsonNode t = admin.root.client().post(ApiClient.Service.ADMISSION,
                    "/v1/admin/tokens/" + ApiClient.encode(id) + "/rotate" + query, "{}", java.util.Map.of());
            showSecret(t);
            if (!admin.root.output().format().machine()) {
                JsonNode old = t.path("replaced");
                admin.root.env().out().println(id + (old.path("revokedAt").isTextual()
                        ? " is revoked" : " keeps working until " + old.path("expiresAt").asText()));
            }
            return ExitCode.OK;
        }

        /** The token once: on stdout (so it can be piped into a secret store), the warning on stderr. */
        private void showSecret(JsonNode t) {
            admin.root.output().show(t, () -> t.path("tokenId").asText() + " issued for tenant "
                    + t.path("tenant").asText() + " (" + t.path("role").asText() + ", expires "
                    + t.path("expiresAt").asText() + ")\n" + t.path("token").asText() + "\n");
            admin.root.env().err().println("gantry: store this token now: it is shown only this once "
                    + "(Gantry keeps only its hash)");
        }
    }

    @Command(name = "queue-config", mixinStandardHelpOptions = true, synopsisSubcommandLabel = "COMMAND",
            description = "The queue configuration: its queues, the tenant each belongs to, quotas and cohorts. "
                    + "This is how a tenant is given (or moved to) queues.")
    static final class QueueConfig implements Runnable {
        @ParentCommand
        AdminCommand admin;

        @Override
        public void run() {
            throw new CliException(ExitCode.INVALID, "name a queue-config command: get or put");
        }

        @Command(name = "get", mixinStandardHelpOptions = true,
                description = "Print the live configuration as YAML (-o json: with its version and the last refusal).")
        int get() {
            if (admin.root.output().format().machine()) {
                JsonNode status = admin.root.client().get(ApiClient.Service.QUEUE, "/v1/admin/queue-config");
                admin.root.output().show(status, () -> "");
            } else {
                admin.root.env().out().print(admin.root.client().getText(ApiClient.Service.QUEUE,
                        "/v1/admin/queue-config", "application/yaml"));
            }
            return ExitCode.OK;
        }

        @Command(name = "put", mixinStandardHelpOptions = true,
                description = "Replace the configuration with FILE (YAML, or JSON for *.json); live at once if valid.")
        int put(@Parameters(paramLabel = "FILE") Path file,
                @Option(names = "--force", description = "apply even if it leaves queued or running jobs without "
                        + "their queue") boolean force) {
            byte[] body;
            try {
                body = Files.readAllBytes(file);
            } catch (NoSuchFileException e) {
                throw new CliException(ExitCode.INVALID, file + ": no such file");
            } catch (IOException e) {
                throw new CliException(ExitCode.INVALID, file + ": " + e.getMessage());
            }
            String type = file.getFileName().toString().endsWith(".json") ? "application/json" : "application/yaml";
            JsonNode applied = admin.root.client().put(ApiClient.Service.QUEUE,
                    "/v1/admin/queue-config" + (force ? "?force=true" : ""), body, type);
            admin.root.output().show(applied, () -> "queue configuration version " + applied.path("version").asText()
                    + " applied\n");
            return ExitCode.OK;
        }
    }
}
