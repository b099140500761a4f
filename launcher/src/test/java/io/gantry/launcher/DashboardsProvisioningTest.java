package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static io.gantry.launcher.ComposeFileTest.at;
import static io.gantry.launcher.ComposeFileTest.yaml;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docker-compose.yml provisions Prometheus and Grafana from deploy/ (no Docker here, so the wiring is checked
 * against the files): Prometheus reads deploy/prometheus with its rules, Grafana's datasource is the one every
 * dashboard panel names, and the dashboard provider reads the directory the dashboards are mounted in.
 * {@link PrometheusDashboardsTest} proves the queries themselves.
 */
class DashboardsProvisioningTest {
    static final Path REPO = ComposeFileTest.REPO;

    @Test
    @SuppressWarnings("unchecked")
    void composeStartsPrometheusAndGrafanaOnTheFilesInDeploy() throws IOException {
        Map<String, Object> services = at(yaml(REPO.resolve("docker-compose.yml")), "services");
        Map<String, Object> prometheus = (Map<String, Object>) services.get("prometheus");
        assertThat((List<String>) prometheus.get("volumes")).contains("./deploy/prometheus:/etc/prometheus:ro");
        assertThat((List<String>) prometheus.get("command"))
                .contains("--config.file=/etc/prometheus/prometheus.yml");
        Map<String, Object> config = yaml(REPO.resolve("deploy/prometheus/prometheus.yml"));
        assertThat((List<String>) config.get("rule_files")).containsExactly("rules/*.yml");

        Map<String, Object> grafana = (Map<String, Object>) services.get("grafana");
        assertThat((List<String>) grafana.get("volumes")).contains(
                "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro",
                "./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro");
        Map<String, Object> provider = ((List<Map<String, Object>>) yaml(
                REPO.resolve("deploy/grafana/provisioning/dashboards/gantry.yml")).get("providers")).get(0);
        assertThat(((Map<String, Object>) provider.get("options")).get("path"))
                .isEqualTo("/var/lib/grafana/dashboards");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyPanelQueriesTheProvisionedPrometheus() throws IOException {
        Map<String, Object> datasource = ((List<Map<String, Object>>) yaml(
                REPO.resolve("deploy/grafana/provisioning/datasources/prometheus.yml")).get("datasources")).get(0);
        assertThat(datasource.get("url")).isEqualTo("http://prometheus:9090");
        String uid = (String) datasource.get("uid");
        Set<String> dashboardUids = new HashSet<>();
        try (Stream<Path> files = Files.list(REPO.resolve("deploy/grafana/dashboards"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json")).toList()) {
                JsonNode dashboard = Api.JSON.readTree(Files.readString(f));
                assertThat(dashboardUids.add(dashboard.path("uid").asText())).as(f + " has its own uid").isTrue();
                for (JsonNode panel : dashboard.path("panels")) {
                    assertThat(panel.path("datasource").path("uid").asText()).as(f + ": " + panel.path("title"))
                            .isEqualTo(uid);
                    panel.path("targets").forEach(t -> assertThat(t.path("expr").asText())
                            .as(f + ": " + panel.path("title")).isNotBlank());
                }
            }
        }
        assertThat(dashboardUids).contains("gantry-operator", "gantry-tenant");
    }
}
