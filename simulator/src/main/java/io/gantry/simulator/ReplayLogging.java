package io.gantry.simulator;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.core.joran.spi.JoranException;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * Logging for replays and benches: their own configuration ({@code gantry-simulator-logback.xml}: warnings and errors
 * to standard error, the report on standard output), found by logback as a service before it looks for a
 * {@code logback.xml}. The service jars on the simulator's class path each carry one (their own, for a service
 * process), so the default lookup found five besides the simulator's, took whichever came first on the class path
 * and printed some thirty lines of warnings and status before every report.
 */
public final class ReplayLogging extends ContextAwareBase implements Configurator {
    static final String RESOURCE = "/gantry-simulator-logback.xml";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        JoranConfigurator joran = new JoranConfigurator();
        joran.setContext(context);
        try {
            joran.doConfigure(ReplayLogging.class.getResource(RESOURCE));
        } catch (JoranException e) {
            addError("could not read " + RESOURCE + "; falling back to logback's own lookup", e);
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
