package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules and dashboards give the cluster's figures with one instance of each service and with two. A gauge that
 * describes the whole cluster is exported by one instance (the owner of the work, or admission's and billing's
 * reporting instance), but by two for a moment at a handover or during a rolling upgrade, and twice when two scrape
 * jobs scrape a pod: every query first deduplicates it with {@code max} (or {@code min}) by its own labels, and only
 * then sums it. A query that sums such a gauge across instances fails here, as does a Gantry metric nobody has said
 * how to aggregate. Counters and histograms count each event on one instance, so their rates are summed. Then
 * {@code promtool test rules} runs deploy/prometheus/tests/ (one instance, two, two exporting the same series,
 * two scrape jobs, a counter moving with a handover).
 */
class RulesAcrossInstancesTest {
    static final Path DEPLOY = PrometheusDashboardsTest.DEPLOY;

    /** Gauges describing the whole cluster, each with the labels that tell its series apart. */
    static final Map<String, Set<String>> CLUSTER_GAUGES = Map.ofEntries(
            entry("gantry_jobs", Set.of("tenant", "state")),
            entry("gantry_kafka_consumer_lag_records", Set.of("group", "topic", "partition")),
            entry("gantry_queue_pending_jobs", Set.of("queue", "tenant", "reason")),
            entry("gantry_queue_dispatched_jobs", Set.of("queue", "tenant")),
            entry("gantry_queue_oldest_pending_seconds", Set.of("queue", "tenant")),
            entry("gantry_queue_quota_nominal_gpus", Set.of("queue", "tenant", "flavour")),
            entry("gantry_queue_quota_used_gpus", Set.of("queue", "tenant", "flavour")),
            entry("gantry_queue_quota_borrowed_gpus", Set.of("queue", "tenant", "flavour")),
            entry("gantry_queue_quota_lent_gpus", Set.of("queue", "tenant", "flavour")),
            entry("gantry_queue_fair_share_ratio", Set.of("queue", "tenant")),
            entry("gantry_queue_weighted_share_ratio", Set.of("queue", "tenant")),
            entry("gantry_placement_gpus", Set.of("pool", "model", "state")),
            entry("gantry_placement_node_gpus", Set.of("node", "pool", "state")),
            entry("gantry_placement_fragmentation", Set.of("pool")),
            entry("gantry_placement_stranded_gpus", Set.of("pool", "size")),
            entry("gantry_recovery_nodes", Set.of("state")),
            entry("gantry_recovery_node_up", Set.of("node")),
            entry("gantry_recovery_node_heartbeat_age_seconds", Set.of("node")),
            entry("gantry_billing_month_gpu_seconds", Set.of("tenant")),
            entry("gantry_billing_month_cost", Set.of("tenant")),
            entry("gantry_billing_month_cost_per_successful_job", Set.of("tenant")),
            entry("gantry_billing_month_allocation_share", Set.of("tenant")),
            entry("gantry_billing_month_gpu_sampled_seconds", Set.of("tenant")),
            entry("gantry_billing_month_gpu_used_seconds", Set.of("tenant")),
            entry("gantry_billing_idle_allocations", Set.of("tenant")),
            entry("gantry_billing_budget_spent", Set.of("tenant", "queue")),
            entry("gantry_billing_budget_limit", Set.of("tenant", "queue")),
            entry("gantry_billing_month_to_date_gpu_seconds", Set.of("tenant")),
            entry("gantry_billing_month_to_date_entries", Set.of("tenant")));
    /** Series of one instance, never the cluster's: read per instance, or summed as the work each did. */
    static final Set<String> PER_INSTANCE = Set.of("gantry_instance_owner", "gantry_instance_reporter");
    private static final Pattern METRIC = Pattern.compile("\\b(gantry_[a-z0-9_]+)\\b");
    private static final Pattern AGGREGATION = Pattern.compile(
            "(sum|avg|count|min|max|stddev|stdvar|topk|bottomk|quantile|count_values|group)\\s*"
                    + "(?:(?:by|without)\\s*\\(([^)]*)\\)\\s*)?$");

    @Test
    void everyRuleAndDashboardQueryDeduplicatesClusterWideGaugesBeforeSummingThem() throws IOException {
        Map<String, String> queries = queries();
        assertThat(queries).hasSizeGreaterThan(40);
        Map<String, String> problems = new TreeMap<>();
        queries.forEach((what, expr) -> problem(expr).ifPresent(p -> problems.put(what, expr + "\n    -> " + p)));
        assertThat(problems).as("queries that would count a cluster-wide series once per instance exporting it")
                .isEmpty();
    }

    /** The check itself, on named cases: what it lets through and what it refuses. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "lag summed per group | sum by (group) (gantry_kafka_consumer_lag_records) | refused",
            "lag of each partition once, then summed | sum by (group) (max by (group, topic, partition) "
                    + "(gantry_kafka_consumer_lag_records)) | accepted",
            "jobs summed | sum(gantry_jobs{state=\"RUNNING\"}) | refused",
            "jobs deduplicated by too few labels, then summed | sum(max by (state) (gantry_jobs)) | refused",
            "the largest of a gauge | max by (queue) (gantry_queue_oldest_pending_seconds) > 1800 | accepted",
            "a gauge compared as it is | gantry_recovery_node_up == 0 | refused",
            "a gauge divided as it is | gantry_billing_month_gpu_seconds / 3600 | refused",
            "a counter's rate summed | sum by (owner, topic) (increase(gantry_dead_letters_total[10m])) | accepted",
            "a histogram summed | histogram_quantile(0.9, sum by (le) "
                    + "(rate(gantry_job_admission_wait_seconds_bucket[5m]))) | accepted",
            "a metric nobody classified | sum(gantry_something_new) | refused",
            "a recorded figure summed | sum(gantry:jobs:by_tenant_state{state=\"QUEUED\"}) | accepted",
    })
    void theCheckRefusesASumOverInstancesOfAClusterWideGauge(String name, String expr, String verdict) {
        assertThat(problem(expr)).as(expr).matches(p -> p.isPresent() == verdict.equals("refused"));
    }

    @Test
    void theRulesGiveTheClustersFiguresWithOneAndWithTwoInstances() throws Exception {
        PrometheusDashboardsTest.prometheusBinary(); // installs Debian's prometheus (and promtool), or skips
        List<String> args = new ArrayList<>(List.of("test", "rules"));
        try (Stream<Path> files = Files.list(DEPLOY.resolve("prometheus/tests"))) {
            files.filter(f -> f.toString().endsWith(".yml")).sorted().forEach(f -> args.add(f.toString()));
        }
        assertThat(args).hasSizeGreaterThan(2);
        PrometheusDashboardsTest.promtool(args.toArray(String[]::new));
    }

    /** Why {@code expr} would count a cluster-wide gauge once per instance exporting it, if it would. */
    static Optional<String> problem(String expr) {
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            String metric = m.group(1);
            if (PER_INSTANCE.contains(metric) || metric.endsWith("_total") || metric.endsWith("_bucket")
                    || metric.endsWith("_count") || metric.endsWith("_sum")) {
                continue;
            }
            Set<String> labels = CLUSTER_GAUGES.get(metric);
            if (labels == null) {
                return Optional.of(metric + " is not classified: add it to CLUSTER_GAUGES (with its labels) or "
                        + "PER_INSTANCE");
            }
            int open = enclosingParen(expr, m.start());
            Matcher agg = open < 0 ? null : AGGREGATION.matcher(expr.substring(0, open).stripTrailing());
            if (agg == null || !agg.find() || !(agg.group(1).equals("max") || agg.group(1).equals("min"))) {
                return Optional.of(metric + " may come from two instances: take max by (" + String.join(", ",
                        new java.util.TreeSet<>(labels)) + ") of it first");
            }
            Set<String> by = agg.group(2) == null ? Set.of() : new HashSet<>(Arrays.stream(agg.group(2).split(","))
                    .map(String::strip).filter(s -> !s.isEmpty()).toList());
            int outer = enclosingParen(expr, agg.start());
            boolean nested = false;
            while (outer >= 0 && !nested) {
                Matcher around = AGGREGATION.matcher(expr.substring(0, outer).stripTrailing());
                nested = around.find() && !around.group(1).equals("max") && !around.group(1).equals("min");
                outer = enclosingParen(expr, outer);
            }
            if (nested && !by.containsAll(labels)) {
                return Optional.of(metric + " is deduplicated by (" + String.join(", ", by) + ") only, then "
                        + "aggregated again: deduplicate it by all its labels " + new java.util.TreeSet<>(labels));
            }
        }
        return Optional.empty();
    }

    /** The index of the '(' that encloses position {@code at}, or -1. */
    private static int enclosingParen(String expr, int at) {
        int depth = 0;
        for (int i = at - 1; i >= 0; i--) {
            char c = expr.charAt(i);
            if (c == ')') {
                depth++;
            } else if (c == '(') {
                if (depth == 0) {
                    return i;
                }
                depth--;
            }
        }
        return -1;
    }

    /** Every rule's expression and every dashboard panel's query, by where it is (not the label lookups). */
    @SuppressWarnings("unchecked")
    static Map<String, String> queries() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(DEPLOY.resolve("prometheus/rules"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yml")).sorted().toList()) {
                Map<String, Object> doc = new Yaml().load(Files.readString(f));
                for (Map<String, Object> group : (List<Map<String, Object>>) doc.get("groups")) {
                    for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                        out.put(f.getFileName() + " / " + rule.getOrDefault("record", rule.get("alert")),
                                (String) rule.get("expr"));
                    }
                }
            }
        }
        try (Stream<Path> files = Files.list(DEPLOY.resolve("grafana/dashboards"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                JsonNode json = Api.JSON.readTree(Files.readString(f));
                for (JsonNode panel : json.path("panels")) {
                    for (JsonNode target : panel.path("targets")) {
                        out.put(f.getFileName() + " / " + panel.path("title").asText() + " / "
                                + target.path("refId").asText(), target.path("expr").asText());
                    }
                }
            }
        }
        return out;
    }
}
