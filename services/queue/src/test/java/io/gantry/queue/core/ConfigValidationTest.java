package io.gantry.queue.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A bad configuration is refused with a message that names the path of every problem. */
class ConfigValidationTest {

    record Case(String name, ConfigBuilder config, String problem) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static ConfigBuilder base() {
        return aConfig().flavours("H100").cohort("research");
    }

    static Stream<Case> invalid() {
        return Stream.of(
                new Case("cohorts that are their own ancestors are a cycle",
                        aConfig().flavours("H100").cohort("a", "b").cohort("b", "a")
                                .queue(aQueue("q").quota("H100", 1)),
                        "cohorts[0].parent: cohort 'a' is its own ancestor (cycle)"),
                new Case("a lending limit above nominal is refused",
                        base().queue(aQueue("q").cohort("research").quota("H100", 8, null, 9L)),
                        "queues[0].quotas.H100.lendingLimit: must be <= nominal 8, was 9"),
                new Case("a quota for an unknown flavour is refused",
                        base().queue(aQueue("q").cohort("research").quota("V100", 8)),
                        "queues[0].quotas.V100: unknown flavour 'V100' (flavours: [H100], cpu, memory)"),
                new Case("a queue in an unknown cohort is refused",
                        base().queue(aQueue("q").cohort("nope").quota("H100", 8)),
                        "queues[0].cohort: unknown cohort 'nope'"),
                new Case("a cohort with an unknown parent is refused",
                        aConfig().flavours("H100").cohort("a", "ghost").queue(aQueue("q").quota("H100", 1)),
                        "cohorts[0].parent: unknown cohort 'ghost'"),
                new Case("a queue of a tenant missing from the tenant list is refused",
                        base().set("tenants", List.of("vision")).queue(aQueue("nlp").quota("H100", 1)),
                        "queues[0].tenant: unknown tenant 'nlp' (not in tenants)"),
                new Case("negative quotas are refused",
                        base().queue(aQueue("q").cohort("research").quota("H100", -1)),
                        "queues[0].quotas.H100.nominal: must be >= 0, was -1"),
                new Case("negative borrowing limits are refused",
                        base().queue(aQueue("q").cohort("research").quota("H100", 4, -2L, null)),
                        "queues[0].quotas.H100.borrowingLimit: must be >= 0, was -2"),
                new Case("borrowing needs a cohort",
                        base().queue(aQueue("q").quota("H100", 4, 2L, null)),
                        "queues[0].quotas.H100: borrowingLimit/lendingLimit need the queue to be in a cohort"),
                new Case("a weight must be positive",
                        base().queue(aQueue("q").weight(0).quota("H100", 4)),
                        "queues[0].weight: must be > 0, was 0.0"),
                new Case("two queues of one name are refused",
                        base().queue(aQueue("q").quota("H100", 4)).queue(aQueue("q").quota("H100", 4)),
                        "queues[1].name: duplicate queue 'q'"),
                new Case("the default priority class must exist",
                        base().queue(aQueue("q").quota("H100", 4)).set("priorityClasses",
                                java.util.Map.of("default", "gold", "classes", java.util.Map.of("normal", 0))),
                        "priorityClasses.default: unknown priority class 'gold'"),
                new Case("a half-life must be a duration",
                        base().halfLife("soon").queue(aQueue("q").quota("H100", 4)),
                        "halfLife: must be a duration >= 0 such as 7d, 12h, 30m, 45s or PT1H, was 'soon'"),
                new Case("unknown keys are refused rather than ignored",
                        base().queue(aQueue("q").quota("H100", 4).set("wieght", 2)),
                        "queues[0].wieght: unknown key (allowed: [cohort, idleTimeout, name, ordering, quotas, shard, tenant, weight])"),
                new Case("an idle timeout must be a duration",
                        base().set("idleTimeout", "soon").queue(aQueue("q").quota("H100", 4)),
                        "idleTimeout: must be a duration >= 0 such as 7d, 12h, 30m, 45s or PT1H, was 'soon'"),
                new Case("an idle timeout shorter than a minute is refused (never switches it off)",
                        base().queue(aQueue("q").quota("H100", 4).set("idleTimeout", "30s")),
                        "queues[0].idleTimeout: must be at least 1m, or never, was '30s'"),
                new Case("an idle timeout of 0 is refused rather than read as never",
                        base().set("idleTimeout", "0").queue(aQueue("q").quota("H100", 4)),
                        "idleTimeout: must be at least 1m, or never, was '0'"),
                new Case("tenant names follow the tenant name rules",
                        base().queue(aQueue("q").tenant("Team A").quota("H100", 4)),
                        "queues[0].tenant: must be a lower-case name ([a-z0-9][a-z0-9-]{0,62}), was 'Team A'"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void anInvalidConfigurationIsRefusedNamingThePath(Case c) {
        assertThatThrownBy(() -> c.config().build()).isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).problems()).contains(c.problem()));
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        ConfigBuilder c = base().halfLife("-1d").queue(aQueue("q").cohort("nope").weight(-1).quota("H100", -1));
        assertThatThrownBy(c::build).isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).problems()).hasSize(4))
                .hasMessageStartingWith("invalid queue configuration: halfLife:");
    }

    @Test
    void theExampleFileIsValid() throws IOException {
        Object doc;
        try (Reader in = Files.newBufferedReader(Path.of("src/main/resources/examples/queues.yml"))) {
            doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        }
        FairShareConfig config = FairShareConfig.fromYaml(doc);
        assertThat(config.flavours()).containsExactly("H100", "A100");
        assertThat(config.queues()).extracting(FairShareConfig.QueueDef::name)
                .containsExactly("vision", "nlp", "nlp-batch", "speech", "platform");
        assertThat(config.cohorts()).containsEntry("research", "org").containsEntry("org", null);
        assertThat(config.priorityClasses()).containsEntry("production", 1000);
        assertThat(config.halfLife()).isEqualTo(Duration.ofDays(7));
        assertThat(config.starvationWait()).isEqualTo(Duration.ofMinutes(30));
        assertThat(config.queues().get(0).quotas().get("H100"))
                .isEqualTo(new FairShareConfig.ResourceQuota(16_000, 8_000L, 8_000L)); // GPUs kept in thousandths
        // idle reclamation: the root timeout for queues that set none, a queue's own, a queue that opted out
        assertThat(config.idleTimeoutOf("vision")).isEqualTo(Duration.ofHours(2));
        assertThat(config.idleTimeoutOf("platform")).isEqualTo(Duration.ofMinutes(30));
        assertThat(config.idleTimeoutOf("nlp-batch")).isNull();
        assertThat(config.idleTimeoutOf("no-such-queue")).isNull();
    }

    @Test
    void withoutAnIdleTimeoutNoQueueStopsIdleRunsAndTheImplicitFormTakesOneForEveryTenant() {
        assertThat(base().queue(aQueue("q").quota("H100", 4)).build().idleTimeoutOf("q")).isNull();
        assertThat(base().set("idleTimeout", "never").queue(aQueue("q").quota("H100", 4)).build().idleTimeoutOf("q"))
                .isNull();
        FairShareConfig implicit = FairShareConfig.fromYaml(java.util.Map.of("implicit",
                java.util.Map.of("defaultGpuQuota", 8), "idleTimeout", "45m"));
        assertThat(implicit.idleTimeoutOf("any-tenant")).isEqualTo(Duration.ofMinutes(45));
    }

    @Test
    void aConfigurationWrittenAsADocumentAndDumpedAsYamlReadsBackEqual() throws IOException {
        FairShareConfig config;
        try (Reader in = Files.newBufferedReader(Path.of("src/main/resources/examples/queues.yml"))) {
            config = FairShareConfig.fromYaml(new Yaml(new SafeConstructor(new LoaderOptions())).load(in));
        }
        FairShareConfig noDecayNoPreemption = new FairShareConfig(config.flavours(), config.cohorts(),
                config.queues(), config.priorityClasses(), config.defaultPriorityClass(),
                Duration.ofDays(365L * 1000), Duration.ofMillis(90_500), null, FairShareConfig.Preemption.OFF);

        for (FairShareConfig c : List.of(config, noDecayNoPreemption)) {
            String yaml = new Yaml().dump(c.toDocument());
            assertThat(FairShareConfig.fromYaml(new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml)))
                    .isEqualTo(c);
        }
    }

    @Test
    void theDevExampleFileIsValidAndGivesTheDevTenantDemoAQueue() throws IOException {
        Object doc;
        try (Reader in = Files.newBufferedReader(Path.of("src/main/resources/examples/queues-dev.yml"))) {
            doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        }
        FairShareConfig config = FairShareConfig.fromYaml(doc);
        assertThat(config.hasQueue("demo", null)).isTrue();
        assertThat(config.queues()).extracting(FairShareConfig.QueueDef::name).contains("vision", "nlp", "demo");
    }

    @Test
    void theImplicitConfigurationHasADocumentFormThatParsesBackToIt() {
        Map<String, Object> doc = new java.util.LinkedHashMap<>();
        doc.put("implicit", Map.of("defaultGpuQuota", 64, "quotas", Map.of("team-a", 8)));
        doc.put("halfLife", "12h");
        doc.put("starvationWait", "30m");
        doc.put("preemption", Map.of("withinQueue", "lowerPriority", "gracePeriod", "10s", "minRunTime", "1m"));
        FairShareConfig c = FairShareConfig.fromYaml(doc);
        assertThat(c.isImplicit()).isTrue();
        assertThat(c.implicitQuotas()).isEqualTo(Quotas.ofGpus(64, Map.of("team-a", 8)));
        assertThat(c.halfLife()).isEqualTo(Duration.ofHours(12));
        assertThat(c.preemption().gracePeriod()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.priorityClasses()).containsOnlyKeys("normal");
        assertThat(c.hasQueue("anyone", null)).isTrue();
        assertThat(c.hasQueue("anyone", "other")).isFalse();
    }

    @Test
    void theImplicitFormCannotBeMixedWithQueuesAndNamesItsBadQuotas() {
        Map<String, Object> doc = new java.util.LinkedHashMap<>();
        doc.put("implicit", Map.of("defaultGpuQuota", -1, "quotas", Map.of("team-a", "many")));
        doc.put("queues", List.of());
        assertThatThrownBy(() -> FairShareConfig.fromYaml(doc)).isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).problems()).containsExactlyInAnyOrder(
                        "queues: not allowed with implicit (implicit queues are one per tenant, named after it)",
                        "implicit.defaultGpuQuota: must be >= 0, was -1",
                        "implicit.quotas.team-a: must be a number of GPUs such as 8 or 12.5, was many"));
    }
}
