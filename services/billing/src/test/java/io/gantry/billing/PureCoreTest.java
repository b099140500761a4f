package io.gantry.billing;

import io.gantry.testkit.PureCore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The billing core is plain Java: checked on its compiled classes (see {@link PureCore}). */
class PureCoreTest {
    @Test
    void theCoreUsesNoFrameworkIoThreadsOrWallClock() {
        assertThat(PureCore.violations("io.gantry.billing.core")).isEmpty();
    }
}
