package io.gantry.simulator.whatif;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.queue.core.FairShareConfig;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code ./gantry whatif --from BOOTSTRAP|DATA_DIR [--config queues.yml] [--policy binpack|spread] [--out FILE]}:
 * replays what an installation recorded under the configuration it had and under another one, and prints both.
 */
public final class WhatIfMain {
    private WhatIfMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                usage(null);
                return;
            }
            if (!a.startsWith("--") || i + 1 >= args.length) {
                usage("expected --option value, got " + a);
                System.exit(2);
            }
            opts.put(a.substring(2), args[++i]);
        }
        for (String k : opts.keySet()) {
            if (!k.equals("from") && !k.equals("config") && !k.equals("policy") && !k.equals("out")) {
                usage("unknown option --" + k);
                System.exit(2);
            }
        }
        if (opts.get("from") == null || (opts.get("config") == null && opts.get("policy") == null)) {
            usage("give --from, and --config and/or --policy (the alternative to compare with)");
            System.exit(2);
        }
        // everything given is checked before the history is read (that may take a while)
        if (opts.get("policy") != null && !List.of("binpack", "spread").contains(opts.get("policy")
                .toLowerCase(Locale.ROOT))) {
            usage("--policy must be binpack or spread, was " + opts.get("policy"));
            System.exit(2);
        }
        FairShareConfig alternative = null;
        if (opts.get("config") != null) {
            try {
                alternative = parseConfig(Path.of(opts.get("config")));
            } catch (IllegalArgumentException e) {
                System.err.println("whatif: " + e.getMessage());
                System.exit(2);
            }
        }
        Path from = Path.of(opts.get("from"));
        if (!Files.isDirectory(from) && (opts.get("from").contains("/") || !opts.get("from").contains(":"))) {
            System.err.println("whatif: --from " + opts.get("from") + ": neither a data directory nor a Kafka "
                    + "address (host:port)");
            System.exit(2);
        }
        History history;
        try {
            history = read(opts.get("from"));
        } catch (Exception e) {
            System.err.println("whatif: cannot read the history from " + opts.get("from") + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        if (history.submissions().isEmpty()) {
            System.err.println("whatif: the history holds no submitted job");
            System.exit(1);
        }
        if (alternative != null) {
            java.util.SortedSet<String> without = queuesMissing(alternative, history);
            if (!without.isEmpty()) {
                System.err.println("whatif: --config " + opts.get("config") + " has no queue for " + String.join(", ",
                        without) + ", which the history's jobs use: they could never run under it (a configuration "
                        + "the queue would refuse as stranding them)");
                System.exit(1);
            }
        }
        WhatIf.Setup recorded = new WhatIf.Setup("the recorded configuration", history.queueConfigYaml(),
                PlacementPolicy.BINPACK);
        String altYaml = opts.get("config") == null ? history.queueConfigYaml()
                : Files.readString(Path.of(opts.get("config")));
        PlacementPolicy altPolicy = opts.get("policy") == null ? PlacementPolicy.BINPACK
                : PlacementPolicy.valueOf(opts.get("policy").toUpperCase(Locale.ROOT));
        String name = (opts.get("config") == null ? "" : Path.of(opts.get("config")).getFileName().toString())
                + (opts.get("config") != null && opts.get("policy") != null ? " + " : "")
                + (opts.get("policy") == null ? "" : altPolicy.name().toLowerCase(Locale.ROOT) + " placement");
        WhatIf.Result alt = WhatIf.replay(history, new WhatIf.Setup(name, altYaml, altPolicy));
        String report = WhatIf.report(history, WhatIf.replay(history, recorded), alt);
        if (opts.get("out") != null) {
            Files.writeString(Path.of(opts.get("out")), report);
            System.out.println("whatif: report written to " + opts.get("out"));
        }
        System.out.print(report);
        long unfinished = alt.jobs().stream().filter(j -> j.state().equals("UNFINISHED")).count();
        if (unfinished > 0) {
            System.err.println("whatif: " + unfinished + " of " + alt.jobs().size() + " jobs never ended under "
                    + name + " (e.g. a GPU model no node has, or quota they can never get): its figures count only "
                    + "the jobs that ended");
            System.exit(3);
        }
    }

    /** The queues the history's jobs use that {@code c} does not have (they could never run under it). */
    static java.util.SortedSet<String> queuesMissing(FairShareConfig c, History history) {
        java.util.SortedSet<String> without = new java.util.TreeSet<>();
        for (History.Submission s : history.submissions()) {
            String queue = s.spec().getQueue();
            if (!c.hasQueue(s.tenant(), queue)) {
                without.add(queue == null ? "tenant " + s.tenant() + " (its default queue)"
                        : "queue " + queue + " of tenant " + s.tenant());
            }
        }
        return without;
    }

    /** The alternative queue configuration, or why it is refused (its file named, never a temporary copy). */
    static FairShareConfig parseConfig(Path file) {
        return io.gantry.simulator.Replay.readQueueConfig("--config", file);
    }

    /**
     * From a bootstrap address, or from a stopped installation's data directory (its {@code kafka/} log is copied
     * and served by an embedded broker on a free port, so the installation itself is not touched).
     */
    static History read(String from) throws Exception {
        Path dir = Path.of(from);
        if (!Files.isDirectory(dir)) {
            // a running installation: its broker may ask for the settings the services get (KAFKA_SASL_JAAS_CONFIG...)
            Map<String, Object> settings = new java.util.HashMap<>(
                    io.gantry.embedded.KafkaEnvironment.clientSettings(System.getenv()));
            return History.fromKafka(from, io.gantry.runtime.kafka.KafkaSecurity.from(settings));
        }
        Path kafka = dir.resolve("kafka");
        if (!Files.isDirectory(kafka)) {
            throw new IllegalArgumentException(dir + " has no kafka/ directory (a `gantry dev --data-dir`?)");
        }
        Path copy = Files.createTempDirectory("gantry-whatif-");
        try (Stream<Path> files = Files.walk(kafka)) {
            for (Path p : files.toList()) {
                Path target = copy.resolve(kafka.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (!p.getFileName().toString().equals(".lock")) {
                    Files.copy(p, target);
                }
            }
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (EmbeddedKafka broker = EmbeddedKafka.start(copy, port, Map.of())) {
            return History.fromKafka(broker.bootstrapServers());
        } finally {
            try (Stream<Path> walk = Files.walk(copy)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // a temporary copy left behind is harmless
            }
        }
    }

    private static void usage(String problem) {
        if (problem != null) {
            System.err.println("whatif: " + problem);
        }
        System.err.println("""
                usage: whatif --from BOOTSTRAP|DATA_DIR [--config queues.yml] [--policy binpack|spread] [--out FILE]
                  --from     a running installation's Kafka (host:port) or a stopped one's data directory (.gantry)
                  --config   the queue configuration to compare with (the YAML the queue's admin API takes)
                  --policy   the placement policy to compare with (default binpack)
                  --out      also write the Markdown report to this file
                Replays every recorded submission and cancellation, each job running as long as it ran, under the
                recorded configuration and under the alternative, through the production handlers in virtual time.""");
    }
}
