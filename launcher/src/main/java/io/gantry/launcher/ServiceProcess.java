package io.gantry.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A service running as a child JVM; its output goes to a log file. */
public final class ServiceProcess {
    /** System property of the launcher JVM: {@value #FULL_JIT} runs the services with both JIT compilers. */
    static final String JIT_PROPERTY = "gantry.service.jit";
    static final String FULL_JIT = "full";
    /** The services' {@code ParentWatch} property (runtime's; not a dependency of the launcher). */
    static final String PARENT_PID = "gantry.parent-pid";
    private final ServiceSpec spec;
    private final Path jar;
    private final Path logFile;
    private final Map<String, String> properties;
    private final String heap;
    private Process process;

    ServiceProcess(ServiceSpec spec, Path jar, Path logFile, Map<String, String> properties, String heap) {
        this.spec = spec;
        this.jar = jar;
        this.logFile = logFile;
        this.properties = Map.copyOf(properties);
        this.heap = heap;
    }

    public synchronized void start() throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-XX:+UseSerialGC");
        if (!FULL_JIT.equals(System.getProperty(JIT_PROPERTY))) {
            // the quick compiler only: a dev stack starts and answers sooner on a small machine; a load test may ask
            // for both compilers (what the service images run), which cost CPU while they compile
            cmd.add("-XX:TieredStopAtLevel=1");
        }
        cmd.add("-Xss512k");
        cmd.add("-Xmx" + heap);
        cmd.add("-Dorg.apache.avro.SERIALIZABLE_PACKAGES=io.gantry.events");
        // the service stops by itself if this launcher dies without stopping it (kill -9)
        cmd.add("-D" + PARENT_PID + "=" + ProcessHandle.current().pid());
        Map<String, String> secrets = new java.util.LinkedHashMap<>();
        properties.forEach((k, v) -> {
            if (secret(k)) {
                // a command line is anyone's to read (ps); a process's environment only its user's
                secrets.put(environmentName(k), v);
            } else {
                cmd.add("-D" + k + "=" + v);
            }
        });
        cmd.add("-jar");
        cmd.add(jar.toString());
        Files.createDirectories(logFile.getParent());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(secrets);
        process = pb
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
    }

    /** A property whose value is a secret (a password, a JAAS configuration): passed in the environment, never on the command line. */
    static boolean secret(String property) {
        String p = property.toLowerCase(java.util.Locale.ROOT);
        // a JAAS configuration holds the SASL password in its value
        return p.contains("password") || p.contains("jaas");
    }

    /** The environment variable Micronaut reads as {@code property} ({@code a.b-c} as {@code A_B_C}). */
    static String environmentName(String property) {
        return property.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** SIGTERM, then SIGKILL after the grace period. */
    public synchronized void stop(Duration grace) {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** SIGKILL at once: the crash a test uses to prove nothing is lost or repeated. */
    public synchronized void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The OS process id of the running JVM, or -1 before the first start; the load test samples its CPU and RSS. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    public String name() {
        return spec.name();
    }

    public ServiceSpec spec() {
        return spec;
    }

    public Path logFile() {
        return logFile;
    }
}
