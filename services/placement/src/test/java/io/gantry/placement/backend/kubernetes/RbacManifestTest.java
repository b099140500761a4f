package io.gantry.placement.backend.kubernetes;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped RBAC manifest grants every call the backend makes, and cluster-wide nothing but reading nodes and
 * listing pods.
 */
class RbacManifestTest {
    private static final Path MANIFEST = Path.of("../../deploy/kubernetes/placement-rbac.yaml");

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Set<String>>> grants() throws IOException {
        Map<String, Map<String, Set<String>>> byKind = new HashMap<>();
        try (Reader r = Files.newBufferedReader(MANIFEST)) {
            for (Object doc : new Yaml().loadAll(r)) {
                Map<String, Object> m = (Map<String, Object>) doc;
                if (!List.of("Role", "ClusterRole").contains(m.get("kind"))) {
                    continue;
                }
                for (Map<String, Object> rule : (List<Map<String, Object>>) m.get("rules")) {
                    for (String res : (List<String>) rule.get("resources")) {
                        byKind.computeIfAbsent((String) m.get("kind"), k -> new HashMap<>())
                                .computeIfAbsent(res, k -> new HashSet<>())
                                .addAll(new ArrayList<>((List<String>) rule.get("verbs")));
                    }
                }
            }
        }
        return byKind;
    }

    @Test
    void theRoleCoversPodsServicesAndSecretsAndTheClusterRoleOnlyReadsNodesAndListsPods() throws IOException {
        var g = grants();

        assertThat(g.get("Role").get("pods")).contains("get", "list", "watch", "create", "delete", "deletecollection");
        assertThat(g.get("Role").get("services")).contains("get", "create", "delete", "deletecollection");
        assertThat(g.get("Role").get("secrets")).contains("get", "create", "delete", "deletecollection");
        assertThat(g.get("ClusterRole")).containsOnlyKeys("nodes", "pods");
        assertThat(g.get("ClusterRole").get("nodes")).containsExactlyInAnyOrder("get", "list", "watch");
        // the foreign-pod scan lists every namespace's pods; it changes nothing there
        assertThat(g.get("ClusterRole").get("pods")).containsExactly("list");
    }
}
