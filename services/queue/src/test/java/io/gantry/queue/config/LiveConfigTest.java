package io.gantry.queue.config;

import io.gantry.queue.core.ConfigException;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.Shards;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LiveConfigTest {
    @TempDir
    Path dir;

    @Test
    void aFirstStartAsksWhatTheSplitRefusesTooWithNothingBefore() throws Exception {
        Path file = dir.resolve("queues.yml");
        Files.writeString(file, """
                flavours: [H100]
                queues:
                  - {name: solo, tenant: solo, shard: 5, quotas: {H100: {nominal: 8}}}
                """);
        QueueConfig settings = new QueueConfig();
        settings.setConfigFile(file.toString());
        List<FairShareConfig> before = new ArrayList<>();

        assertThatThrownBy(() -> LiveConfig.startup(settings, List.of(), Instant.EPOCH, false, (b, next) -> {
            before.add(b);
            return Shards.refusals(null, Shards.of(next, 2));
        })).isInstanceOf(ConfigException.class).hasMessageContaining(file + ": queues: queue:solo is pinned to shard 5");
        assertThat(before).containsExactly((FairShareConfig) null);
        assertThat(LiveConfig.startup(settings, List.of(), Instant.EPOCH, false, (b, next) ->
                Shards.of(next, 8).problems()).config().shardPins()).containsEntry("queue:solo", 5);
    }
}
