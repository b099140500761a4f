package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;

@Command(name = "nodes", mixinStandardHelpOptions = true,
        description = "The cluster's nodes: health, free and total GPUs, models, cordons.")
final class NodesCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Override
    public Integer call() {
        JsonNode answer = root.client().get(ApiClient.Service.PLACEMENT, "/v1/nodes");
        root.output().show(answer, () -> table(answer, root.output().wide()));
        return ExitCode.OK;
    }

    static String table(JsonNode nodes, boolean wide) {
        Table t = wide
                ? new Table("NODE", "BACKEND", "HEALTHY", "GPUS FREE/TOTAL", "MODEL", "CORDONED", "SPINE", "RACK",
                "CPU FREE/TOTAL", "MEMORY FREE/TOTAL", "RESERVED FOR", "FOREIGN GPUS")
                : new Table("NODE", "BACKEND", "HEALTHY", "GPUS FREE/TOTAL", "MODEL", "CORDONED");
        for (JsonNode n : nodes) {
            Set<String> models = new TreeSet<>();
            n.path("gpus").forEach(g -> models.add(g.path("model").asText()));
            String gpus = n.path("freeGpus").asInt() + "/" + n.path("gpus").size();
            String cordoned = n.path("cordoned").asBoolean() ? "yes" : "no";
            String healthy = n.path("healthy").asBoolean() ? "yes" : "NO";
            if (wide) {
                t.row(n.path("nodeId").asText(), n.path("backend").asText(), healthy, gpus, String.join(",", models),
                        cordoned, JobText.text(n, "spine"), JobText.text(n, "rack"),
                        cores(n.path("freeCpuMillis").asLong()) + "/" + cores(n.path("cpuMillis").asLong()),
                        Output.bytes(n.path("freeMemoryMiB").asLong() << 20) + "/"
                                + Output.bytes(n.path("memoryMiB").asLong() << 20),
                        JobText.text(n, "reservedFor"), foreign(n));
            } else {
                t.row(n.path("nodeId").asText(), n.path("backend").asText(), healthy, gpus, String.join(",", models),
                        cordoned);
            }
        }
        return t.size() == 0 ? "no nodes registered\n" : t.render();
    }

    /** GPUs held by workloads Gantry did not start (off the free count), with who when the caller may see it. */
    private static String foreign(JsonNode n) {
        int gpus = n.path("foreignGpus").asInt();
        if (gpus == 0) {
            return "-";
        }
        String who = n.path("foreignHolders").asText("");
        return who.isEmpty() ? Integer.toString(gpus) : gpus + " (" + who + ")";
    }

    private static String cores(long millis) {
        return millis % 1000 == 0 ? Long.toString(millis / 1000) : String.format(java.util.Locale.ROOT, "%.1f",
                millis / 1000.0);
    }
}
