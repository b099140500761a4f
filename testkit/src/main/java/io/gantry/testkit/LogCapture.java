package io.gantry.testkit;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * What this JVM logs through logback while a test looks: every event that reaches the root logger from
 * {@link #start()} to {@link #close()}, for a test of what a service logs. Needs logback as the SLF4J binding (the
 * services have it; this module does not bring it).
 */
public final class LogCapture implements AutoCloseable {
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private LogCapture() {
    }

    public static LogCapture start() {
        LogCapture capture = new LogCapture();
        capture.appender.start();
        capture.root.addAppender(capture.appender);
        return capture;
    }

    /** The events so far, in order. */
    public List<ILoggingEvent> events() {
        synchronized (appender) { // the appender adds under this lock
            return List.copyOf(appender.list);
        }
    }

    @Override
    public void close() {
        root.detachAppender(appender);
        appender.stop();
    }
}
