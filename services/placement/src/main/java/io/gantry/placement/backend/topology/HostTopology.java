package io.gantry.placement.backend.topology;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * This host's GPU topology: runs {@code <nvidia-smi> -q} and {@code <nvidia-smi> topo -m} and reads the CPUs of
 * each NUMA node from sysfs, then {@link NodeTopology#discover}. Empty when the command is missing, fails, hangs
 * past the timeout or reports no GPU (the configured GPUs are used then).
 */
public final class HostTopology {
    private static final Logger LOG = LoggerFactory.getLogger(HostTopology.class);
    public static final Path SYS_NODES = Path.of("/sys/devices/system/node");

    private HostTopology() {
    }

    public static Optional<NodeTopology.Discovered> discover(String command, Path sysNodes, Duration timeout) {
        if (command == null || command.isBlank()) {
            return Optional.empty();
        }
        Optional<String> query = run(command, List.of("-q"), timeout);
        if (query.isEmpty()) {
            return Optional.empty();
        }
        List<NvidiaSmiQuery.GpuInfo> gpus = NvidiaSmiQuery.parse(query.get());
        if (gpus.isEmpty()) {
            LOG.info("`{} -q` reports no GPU; using the configured GPUs", command);
            return Optional.empty();
        }
        NvidiaSmiTopo topo = null;
        Optional<String> matrix = run(command, List.of("topo", "-m"), timeout);
        if (matrix.isPresent()) {
            try {
                topo = NvidiaSmiTopo.parse(matrix.get());
            } catch (IllegalArgumentException e) {
                LOG.warn("cannot read `{} topo -m` ({}); GPUs registered without NVLink/PCIe/NUMA placement",
                        command, e.getMessage());
            }
        }
        return Optional.of(NodeTopology.discover(gpus, topo, numaCpus(sysNodes)));
    }

    /** NUMA node id to its CPU list, from {@code <sysNodes>/node<N>/cpulist}; empty when not there. */
    static Map<Integer, String> numaCpus(Path sysNodes) {
        Map<Integer, String> out = new TreeMap<>();
        if (sysNodes == null || !Files.isDirectory(sysNodes)) {
            return out;
        }
        try (Stream<Path> dirs = Files.list(sysNodes)) {
            for (Path d : dirs.toList()) {
                String name = d.getFileName().toString();
                Path cpulist = d.resolve("cpulist");
                if (name.matches("node\\d+") && Files.isReadable(cpulist)) {
                    out.put(Integer.parseInt(name.substring(4)), Files.readString(cpulist).trim());
                }
            }
        } catch (IOException e) {
            LOG.debug("cannot read {}: {}", sysNodes, e.toString());
        }
        return out;
    }

    private static Optional<String> run(String command, List<String> args, Duration timeout) {
        List<String> argv = new ArrayList<>(List.of(command.trim().split("\\s+")));
        argv.addAll(args);
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            // read while it runs: a large output would otherwise fill the pipe and never end
            var out = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    return "";
                }
            });
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                LOG.warn("`{}` did not answer within {}; GPU topology not discovered", String.join(" ", argv), timeout);
                return Optional.empty();
            }
            String text = out.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (p.exitValue() != 0) {
                LOG.info("`{}` exited with {}; GPU topology not discovered", String.join(" ", argv), p.exitValue());
                return Optional.empty();
            }
            return Optional.of(text);
        } catch (IOException e) {
            LOG.info("no `{}` on this host ({}); using the configured GPUs", command, e.getMessage());
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return Optional.empty();
        }
    }
}
