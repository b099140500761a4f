package io.gantry.simulator.whatif;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.GpuDevice;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.TaskSpec;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A recorded installation (its topics on a real broker): two tenants on two 8-GPU nodes, each with 8 GPUs of quota;
 * vision's four 8-GPU jobs ran 600 s each, one after another. What if vision had had 16?
 */
class WhatIfTest {
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    static final String RECORDED = """
            flavours: [H100]
            queues:
              - {name: vision, tenant: vision, quotas: {H100: {nominal: 8}}}
              - {name: nlp, tenant: nlp, quotas: {H100: {nominal: 8}}}
            """;
    static final String MORE_FOR_VISION = """
            flavours: [H100]
            queues:
              - {name: vision, tenant: vision, quotas: {H100: {nominal: 16}}}
              - {name: nlp, tenant: nlp, quotas: {H100: {nominal: 8}}}
            """;

    private static void record(String bootstrap) {
        KafkaTopics.ensureAll(bootstrap, 1);
        try (TopicClient topics = new TopicClient(bootstrap)) {
            for (String node : List.of("gpu-a", "gpu-b")) {
                topics.send(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder().setEventId("reg-" + node)
                        .setNodeId(node).setOccurredAt(T0.minusSeconds(60))
                        .setPayload(NodeRegistered.newBuilder()
                                .setGpus(IntStream.range(0, 8).mapToObj(i -> GpuDevice.newBuilder().setIndex(i)
                                        .setModel("H100").setMemoryMiB(81920).setNumaNode(i / 4).build()).toList())
                                .setCpuMillis(96_000).setNumaCpuMillis(List.of(48_000, 48_000)).setMemoryMiB(1_048_576)
                                .setLabels(Map.of("rack", "rack-0", "spine", "spine-0")).setBackend("local").build())
                        .build());
            }
            topics.send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", QueueConfigEvent.newBuilder().setEventId("cfg-1")
                    .setOccurredAt(T0.minusSeconds(60)).setPayload(QueueConfigApplied.newBuilder().setVersion(1)
                            .setSource("admin").setAppliedBy("ops").setSha256("x").setYaml(RECORDED).build())
                    .build());
            for (int i = 0; i < 4; i++) {
                submit(topics, "vision-" + i, "vision", 8, T0.plusSeconds(i));
                ran(topics, "vision-" + i, "vision", T0.plusSeconds(600L * i), 600);
            }
            for (int i = 0; i < 2; i++) {
                submit(topics, "nlp-" + i, "nlp", 4, T0.plusSeconds(10 + i));
                ran(topics, "nlp-" + i, "nlp", T0.plusSeconds(10 + i), 300);
            }
        }
    }

    private static void submit(TopicClient topics, String job, String tenant, int gpus, Instant at) {
        JobSpec spec = JobSpec.newBuilder().setName(job).setPriority(0).setTimeLimitSeconds(null)
                .setTasks(List.of(TaskSpec.newBuilder().setName("worker").setReplicas(1).setCommand(List.of("train"))
                        .setGpus(gpus).setGpuModel(null).setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(null)
                        .build())).build();
        topics.send(Topics.ADMISSION_JOB_EVENTS, job, AdmissionJobEvent.newBuilder().setEventId("sub-" + job)
                .setJobId(job).setOccurredAt(at).setPayload(new JobSubmitted(tenant, spec, null)).build());
    }

    private static void ran(TopicClient topics, String job, String tenant, Instant start, long seconds) {
        topics.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder().setEventId("start-" + job)
                .setJobId(job).setOccurredAt(start).setPayload(new JobRunStarted("a-" + job, tenant, 1, start)).build());
        topics.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder().setEventId("end-" + job)
                .setJobId(job).setOccurredAt(start.plusSeconds(seconds))
                .setPayload(new JobRunSucceeded("a-" + job, tenant, 1, start.plusSeconds(seconds))).build());
    }

    @Test
    void moreQuotaForATenantShowsAsShorterWaitsForItsJobsWithRecordedRunTimes() {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        record(bootstrap);

        History history = History.fromKafka(bootstrap);
        assertThat(history.submissions()).hasSize(6);
        assertThat(history.nodes()).hasSize(2);
        assertThat(history.runSeconds()).containsEntry("vision-0", 600L).containsEntry("nlp-1", 300L);

        WhatIf.Result recorded = WhatIf.replay(history, new WhatIf.Setup("recorded", history.queueConfigYaml(),
                PlacementPolicy.BINPACK));
        WhatIf.Result more = WhatIf.replay(history, new WhatIf.Setup("vision 16", MORE_FOR_VISION,
                PlacementPolicy.BINPACK));

        assertThat(recorded.jobs()).extracting(WhatIf.JobOutcome::state).containsOnly("SUCCEEDED");
        assertThat(more.jobs()).extracting(WhatIf.JobOutcome::state).containsOnly("SUCCEEDED");
        List<WhatIf.JobOutcome> visionRecorded = recorded.jobs().stream().filter(j -> j.tenant().equals("vision"))
                .toList();
        List<WhatIf.JobOutcome> visionMore = more.jobs().stream().filter(j -> j.tenant().equals("vision")).toList();
        assertThat(visionRecorded).allSatisfy(j -> assertThat(j.gpuSeconds()).isEqualTo(8 * 600.0));
        // one 8-GPU job at a time within 8 GPUs of quota: waits of about 0, 600, 1200 and 1800 s
        assertThat(WhatIf.avg(visionRecorded, WhatIf.JobOutcome::waited)).isBetween(850.0, 950.0);
        assertThat(WhatIf.avg(visionMore, WhatIf.JobOutcome::waited))
                .isLessThan(WhatIf.avg(visionRecorded, WhatIf.JobOutcome::waited));

        String report = WhatIf.report(history, recorded, more);
        assertThat(report).contains("# What if: vision 16 instead of recorded", "| avg wait (s) |", "| vision | 4 |",
                "| nlp | 2 |", "6 jobs of 2 tenants");
    }

    @Test
    void anAlternativeThatWouldStrandJobsOrIsNotAConfigurationIsRefusedNamingItsFile(@org.junit.jupiter.api.io.TempDir
                                                                                      Path dir) throws Exception {
        History history = new History(List.of(new History.Submission("j", "vision", JobSpec.newBuilder().setName("j")
                .setPriority(0).setTasks(List.of()).build(), T0)), List.of(), List.of(), RECORDED, Map.of());
        Path onlyNlp = Files.writeString(dir.resolve("nlp.yml"), """
                flavours: [H100]
                queues:
                  - {name: nlp, tenant: nlp, quotas: {H100: {nominal: 8}}}
                """);
        assertThat(WhatIfMain.queuesMissing(WhatIfMain.parseConfig(onlyNlp), history))
                .containsExactly("tenant vision (its default queue)");
        assertThat(WhatIfMain.queuesMissing(WhatIfMain.parseConfig(Files.writeString(dir.resolve("more.yml"),
                MORE_FOR_VISION)), history)).isEmpty();

        Path bad = Files.writeString(dir.resolve("bad.yml"), "queues: [{name: x}]\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> WhatIfMain.parseConfig(bad))
                .hasMessageStartingWith("--config " + bad + ": ");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> WhatIfMain.parseConfig(dir.resolve("none.yml")))
                .hasMessage("--config " + dir.resolve("none.yml") + ": no such file");
    }

    @Test
    void aStoppedInstallationIsReadFromACopyOfItsDataDirectory() throws Exception {
        Path dataDir = Files.createTempDirectory("whatif-install-");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (EmbeddedKafka installation = EmbeddedKafka.start(dataDir.resolve("kafka"), port, Map.of())) {
            record(installation.bootstrapServers());
        }

        History history = WhatIfMain.read(dataDir.toString());

        assertThat(history.submissions()).extracting(History.Submission::jobId)
                .containsExactly("vision-0", "vision-1", "vision-2", "vision-3", "nlp-0", "nlp-1");
        assertThat(history.queueConfigYaml()).isEqualTo(RECORDED);
    }
}
