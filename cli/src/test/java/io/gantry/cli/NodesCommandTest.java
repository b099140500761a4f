package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The node list as an operator reads it. */
class NodesCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theWideListShowsGpusHeldOutsideGantryWithWhoHoldsThemWhenTheCallerMaySee() throws Exception {
        JsonNode nodes = JSON.readTree("""
                [{"nodeId":"gpu-01","backend":"kubernetes","healthy":true,"gpus":[{"model":"H100"},{"model":"H100"}],
                  "freeGpus":0,"cordoned":false,"cpuMillis":8000,"freeCpuMillis":8000,"memoryMiB":1024,
                  "freeMemoryMiB":1024,"foreignGpus":2,"foreignHolders":"pod team-x/notebook (2 GPUs)"},
                 {"nodeId":"gpu-02","backend":"kubernetes","healthy":true,"gpus":[{"model":"H100"}],"freeGpus":0,
                  "cordoned":false,"cpuMillis":8000,"freeCpuMillis":8000,"memoryMiB":1024,"freeMemoryMiB":1024,
                  "foreignGpus":1,"foreignHolders":null},
                 {"nodeId":"gpu-03","backend":"kubernetes","healthy":true,"gpus":[{"model":"H100"}],"freeGpus":1,
                  "cordoned":false,"cpuMillis":8000,"freeCpuMillis":8000,"memoryMiB":1024,"freeMemoryMiB":1024}]""");

        String wide = NodesCommand.table(nodes, true);

        assertThat(wide).contains("FOREIGN GPUS");
        assertThat(line(wide, "gpu-01")).contains("0/2").endsWith("2 (pod team-x/notebook (2 GPUs))");
        assertThat(line(wide, "gpu-02").strip()).endsWith("1");
        assertThat(line(wide, "gpu-03").strip()).endsWith("-");
        assertThat(NodesCommand.table(nodes, false)).doesNotContain("FOREIGN");
    }

    private static String line(String table, String node) {
        return table.lines().filter(l -> l.startsWith(node)).findFirst().orElseThrow().stripTrailing();
    }
}
