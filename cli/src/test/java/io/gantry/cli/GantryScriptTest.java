package io.gantry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The repository's {@code ./gantry} script sends every CLI command to the CLI and the rest to the launcher, run on
 * a copy of the script beside empty jars, with a {@code java} on the PATH that prints what it was asked to run.
 */
class GantryScriptTest {
    @TempDir
    Path repo;

    private String run(String... args) throws IOException, InterruptedException {
        Path script = Path.of("..", "gantry").toAbsolutePath().normalize();
        Files.copy(script, repo.resolve("gantry"));
        for (String jar : List.of("cli/target/gantry-cli.jar", "launcher/target/gantry-launcher.jar",
                "simulator/target/gantry-simulator.jar", "services/admission/target/gantry-admission.jar",
                "services/queue/target/gantry-queue.jar", "services/placement/target/gantry-placement.jar",
                "services/recovery/target/gantry-recovery.jar", "services/billing/target/gantry-billing.jar")) {
            Files.createDirectories(repo.resolve(jar).getParent());
            Files.writeString(repo.resolve(jar), "");
        }
        Path bin = Files.createDirectories(repo.resolve("bin"));
        Path java = Files.writeString(bin.resolve("java"), "#!/bin/sh\necho \"java $*\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> command = new java.util.ArrayList<>(List.of("bash", repo.resolve("gantry").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(repo.toFile()).redirectErrorStream(true);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        Process p = pb.start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes());
        Files.delete(repo.resolve("gantry"));
        return out;
    }

    @Test
    void everyCommandOfTheCliRunsTheCli() throws Exception {
        for (String command : new CommandLine(new Cli(Env.system())).getSubcommands().keySet()) {
            assertThat(run(command, "x")).as(command).contains("gantry-cli.jar " + command + " x")
                    .doesNotContain("gantry-launcher.jar");
        }
    }

    @Test
    void theClisOwnOptionsBeforeItsCommandStillRunTheCli() throws Exception {
        assertThat(run("--api", "http://h:1", "cancel", "x")).contains("gantry-cli.jar --api http://h:1 cancel x")
                .doesNotContain("gantry-launcher.jar");
        assertThat(run("-o", "json", "ps")).contains("gantry-cli.jar -o json ps");
        assertThat(run("--port", "9000")).as("the launcher's own").contains("gantry-launcher.jar --port 9000");
    }

    @Test
    void aWordNoCommandKnowsGoesToTheCliWhichSaysSo() throws Exception {
        assertThat(run("suspnd", "x")).contains("gantry-cli.jar suspnd x");
    }

    @Test
    void devReplayAndOptionsRunTheLauncherAndTheSimulator() throws Exception {
        assertThat(run("dev", "--backend", "local")).contains("gantry-launcher.jar dev --backend local");
        assertThat(run("--instances", "2")).contains("gantry-launcher.jar --instances 2");
        assertThat(run()).contains("gantry-launcher.jar");
        assertThat(run("replay", "--trace", "philly")).contains("gantry-simulator.jar --trace philly");
    }

    @Test
    void theWordsCompletionOffersBesideTheCliAreTheScriptsOwn() throws Exception {
        for (String[] c : CompletionCommand.SCRIPT_COMMANDS) {
            if (!c[0].equals("build")) { // build runs Maven, not java
                assertThat(run(c[0], "--help")).as(c[0]).doesNotContain("gantry-cli.jar");
            }
        }
    }
}
