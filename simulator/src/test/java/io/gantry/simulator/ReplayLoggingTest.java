package io.gantry.simulator;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.status.Status;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

class ReplayLoggingTest {
    @Test
    void replaysUseTheirOwnConfigurationWithoutAWarningAboutTheServicesLogbackFiles() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getStatusManager().getCopyOfStatusList())
                .as("logback's own warnings (a logback.xml found several times)")
                .noneMatch(s -> s.getEffectiveLevel() >= Status.WARN);
    }
}
