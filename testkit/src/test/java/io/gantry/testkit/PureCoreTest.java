package io.gantry.testkit;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PureCoreTest {
    @Test
    void findsTheWallClockAndTheDiskEvenWithoutImportsAndInLambdas() {
        var classes = new ClassFileImporter().importPackages("io.gantry.testkit.impure");

        assertThat(String.join("\n", PureCore.violations(classes, "io.gantry.testkit.impure")))
                .contains("java.time.Instant.now()", "java.io.File", "java.lang.System.nanoTime()");
    }

    @Test
    void plainJavaPasses() {
        var classes = new ClassFileImporter().importPackages("io.gantry.testkit.pure");

        assertThat(PureCore.violations(classes, "io.gantry.testkit.pure")).isEmpty();
    }
}
