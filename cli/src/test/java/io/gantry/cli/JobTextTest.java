package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class JobTextTest {
    private static final Instant NOW = Instant.parse("2026-11-25T04:00:00Z");

    private static JsonNode running(String preemption) throws Exception {
        return ApiClient.JSON.readTree("""
                {"jobId":"j-1","name":"train","state":"RUNNING","attempt":1,"preemption":%s,
                 "placements":[{"task":"w","replica":0,"node":"n1","gpuModel":"H100","gpuIndices":[0]}],
                 "history":[],"spec":{}}""".formatted(preemption));
    }

    @Test
    void aRunBeingStoppedSaysWhyAndHowLongItHasLeft() throws Exception {
        JsonNode job = running("""
                {"attempt":1,"reason":"PREEMPTED","message":"queue vision reclaims 1 x H100 lent to research",
                 "noticeAt":"2026-11-25T03:59:50Z","deadline":"2026-11-25T04:00:25Z"}""");

        assertThat(JobText.line(job, null, null, NOW)).contains("being stopped: queue vision reclaims 1 x H100 lent "
                + "to research; stopped for good in 25s unless it exits");
        List<String> why = WhyCommand.explain(job, null, NOW);
        assertThat(why).anySatisfy(l -> assertThat(l).startsWith("it is being stopped: queue vision reclaims"));
    }

    @Test
    void aWaitSaysHowLongAgoItsReasonWasGivenSoItsFiguresAreReadAsOfThen() throws Exception {
        JsonNode job = ApiClient.JSON.readTree("""
                {"jobId":"j-2","name":"gang","state":"QUEUED","attempt":1,"waitReason":"CAPACITY",
                 "waitMessage":"needs 8 GPUs on one node; the best node, n3, has 6 free","waitCause":"FRAGMENTED",
                 "waitSince":"2026-11-25T03:48:00Z","history":[],"spec":{}}""");

        assertThat(WhyCommand.explain(job, null, NOW)).contains("placement says (12m00s ago): needs 8 GPUs on one "
                + "node; the best node, n3, has 6 free");
    }

    @Test
    void aRetryBackoffAndAJobWhoseQuotaAllowsItAreSaidAsSuch() throws Exception {
        JsonNode backoff = ApiClient.JSON.readTree("""
                {"jobId":"j-3","name":"flaky","state":"QUEUED","attempt":2,"waitReason":"BACKOFF",
                 "waitMessage":"retry 1 of 2 is offered at 2026-11-25T04:00:30Z","history":[],"spec":{}}""");
        assertThat(WhyCommand.explain(backoff, null, NOW)).first().asString()
                .startsWith("waits because its last run failed and it is retried under its retry policy");
        JsonNode turn = ApiClient.JSON.readTree("""
                {"jobId":"j-4","name":"next","state":"QUEUED","attempt":1,"waitReason":"QUOTA","waitCause":"TURN",
                 "waitMessage":"resumed by alice; waits for its turn in its queue","history":[],"spec":{}}""");
        assertThat(WhyCommand.explain(turn, null, NOW)).first().asString()
                .isEqualTo("waits because its quota allows it, and jobs ahead of it in its queue go first.");
    }

    @Test
    void aRunNotBeingStoppedSaysNothingOfIt() throws Exception {
        JsonNode job = running("null");
        assertThat(JobText.line(job, null, null, NOW)).doesNotContain("stopped");
        assertThat(JobText.preemption(job, NOW)).isNull();
        assertThat(JobText.preemption(running("""
                {"message":"m","deadline":"2026-11-25T03:59:00Z"}"""), NOW)).endsWith("its grace period is over");
    }
}
