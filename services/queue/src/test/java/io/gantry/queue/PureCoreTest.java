package io.gantry.queue;

import io.gantry.embedded.PureCoreCheck;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class PureCoreTest {
    @Test
    void theCoreUsesNoFrameworkIoThreadsOrWallClock() {
        assertThat(PureCoreCheck.violations(Path.of("src/main/java"), "io.gantry.queue.core")).isEmpty();
    }
}
