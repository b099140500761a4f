package io.gantry.launcher;

import io.gantry.launcher.load.ProcSampler;
import io.gantry.launcher.load.Stack;

import java.util.List;

/**
 * A Gantry that is already running ({@code --api --token --bootstrap}). Its processes are measured only when they
 * run on this host: service JVMs are found by their jar and their {@code kafka.bootstrap.servers}, the broker
 * and PostgreSQL under the {@code gantry dev} launcher JVM.
 */
final class ExternalStack implements Stack {
    private final String api;
    private final List<String> tokens;
    private final String bootstrap;

    ExternalStack(String api, List<String> tokens, String bootstrap) {
        this.api = api.endsWith("/") ? api.substring(0, api.length() - 1) : api;
        this.tokens = List.copyOf(tokens);
        this.bootstrap = bootstrap;
    }

    @Override
    public String api() {
        return api;
    }

    @Override
    public List<String> tokens() {
        return tokens;
    }

    @Override
    public java.util.Map<String, String> kafkaClientSettings() {
        return io.gantry.embedded.KafkaEnvironment.clientSettings(System.getenv());
    }

    @Override
    public String bootstrap() {
        return bootstrap;
    }

    @Override
    public String description() {
        return "external: API " + api + ", Kafka " + bootstrap + " (started elsewhere; its configuration is not known here)";
    }

    @Override
    public void register(ProcSampler sampler) {
        for (String name : DevCluster.SERVICES) {
            List<Long> pids = ProcSampler.findByCommandLine(List.of("gantry-" + name + ".jar",
                    "kafka.bootstrap.servers=" + bootstrap));
            if (pids.size() == 1) {
                long pid = pids.get(0);
                sampler.pid(name, () -> pid);
            }
        }
        List<Long> launcher = ProcSampler.findByCommandLine(List.of("gantry-launcher.jar", "dev"));
        if (launcher.size() == 1) {
            long pid = launcher.get(0);
            sampler.pid("gantry dev JVM (Kafka broker)", () -> pid);
            
        }
        sampler.tree("postgresql (every postmaster on this host, with its backends)", "postgres", " -D ");
        long self = ProcessHandle.current().pid();
        sampler.pid("harness JVM (load generator)", () -> self);
    }

    @Override
    public void awaitReady() {
        // a running stack is taken as it is; the warm-up probe finds out whether it accepts jobs
    }

    @Override
    public void close() {
    }
}
