package io.gantry.runtime.kafka;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.schemas.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaTopicsTest {

    @Test
    void eventTopicsAreCreatedOnceAndKeepTheirHistoryForeverButHeartbeatsOnlyAnHour() throws Exception {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        KafkaTopics.ensureAll(bootstrap, 1);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            assertThat(admin.listTopics().names().get()).containsAll(Topics.allNames());
            ConfigResource queue = new ConfigResource(ConfigResource.Type.TOPIC, Topics.QUEUE_JOB_EVENTS.name());
            String retention = admin.describeConfigs(List.of(queue)).all().get().get(queue).get("retention.ms").value();
            assertThat(retention).isEqualTo("-1");
            ConfigResource beats = new ConfigResource(ConfigResource.Type.TOPIC, Topics.PLACEMENT_HEARTBEAT_EVENTS.name());
            assertThat(admin.describeConfigs(List.of(beats)).all().get().get(beats).get("retention.ms").value())
                    .isEqualTo("3600000");
            ConfigResource access = new ConfigResource(ConfigResource.Type.TOPIC, Topics.ADMISSION_ACCESS_EVENTS.name());
            assertThat(admin.describeConfigs(List.of(access)).all().get().get(access).get("cleanup.policy").value())
                    .isEqualTo("compact");
        }
    }
}
