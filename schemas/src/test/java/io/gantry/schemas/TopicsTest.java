package io.gantry.schemas;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopicsTest {
    @Test
    void everyTopicIsNamedAfterItsSingleWriterAndNamesAreUnique() {
        List<String> names = Topics.allNames();
        assertThat(new HashSet<>(names)).hasSameSizeAs(names);
        for (Topic<?> t : Topics.eventTopics()) {
            assertThat(t.name()).startsWith(t.owner().id() + ".").endsWith("-events");
        }
    }

    @Test
    void aTopicNamedAfterAnotherServiceIsRejected() {
        assertThatThrownBy(() -> new Topic<>("queue.job-events", Service.ADMISSION, "jobId", String.class))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("owner");
    }

    @Test
    void everyTopicTheRegistryDeclaresIsAnEventTopicSoTheChecksOverEventTopicsSeeIt() throws IllegalAccessException {
        List<Topic<?>> declared = new ArrayList<>();
        for (Field f : Topics.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == Topic.class) {
                declared.add((Topic<?>) f.get(null));
            }
        }

        assertThat(declared).isNotEmpty();
        assertThat(Topics.eventTopics()).containsExactlyInAnyOrderElementsOf(declared);
    }

    @Test
    void eachEventTopicHasItsOwnEnvelopeType() {
        var types = Topics.eventTopics().stream().map(Topic::valueType).toList();
        assertThat(new HashSet<>(types)).hasSameSizeAs(types);
    }
}
