package io.gantry.placement.backend.health;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A recorded nvidia-smi utilisation sample, read as the local backend reads it. */
class GpuUtilisationTest {
    private static String sample(String name) throws IOException {
        try (InputStream in = GpuUtilisationTest.class.getResourceAsStream("/health/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void busyPercentPerGpuIsReadAndGpusThatCannotTellAreLeftOut() throws IOException {
        assertThat(GpuUtilisation.parse(sample("utilisation.csv"))).isEqualTo(Map.of(0, 97, 1, 0, 4, 41));
    }

    @Test
    void anEmptyOrForeignSampleReportsNothing() {
        assertThat(GpuUtilisation.parse("")).isEmpty();
        assertThat(GpuUtilisation.parse("No devices were found")).isEmpty();
        assertThat(GpuUtilisation.parse("0, 140")).as("not a percent").isEmpty();
    }
}
