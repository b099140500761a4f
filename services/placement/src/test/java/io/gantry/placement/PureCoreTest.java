package io.gantry.placement;

import io.gantry.testkit.PureCore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The placement core is plain Java: checked on its compiled classes (see {@link PureCore}). */
class PureCoreTest {
    @Test
    void theCoreUsesNoFrameworkIoThreadsOrWallClock() {
        assertThat(PureCore.violations("io.gantry.placement.core")).isEmpty();
    }
}
