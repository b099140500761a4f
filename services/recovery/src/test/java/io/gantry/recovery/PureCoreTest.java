package io.gantry.recovery;

import io.gantry.embedded.PureCoreCheck;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class PureCoreTest {
    @Test
    void recoveryCoreUsesNoFrameworkIoThreadsOrWallClock() {
        assertThat(PureCoreCheck.violations(Path.of("src/main/java"), "io.gantry.recovery.core")).isEmpty();
    }
}
