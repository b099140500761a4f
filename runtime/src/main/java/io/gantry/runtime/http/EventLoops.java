package io.gantry.runtime.http;

import io.gantry.runtime.kafka.EventProcessor;

import java.util.List;

/** A service's event loops ({@link EventProcessor}s), which {@link EventLoopHealthIndicator} reports on. */
public interface EventLoops {
    List<EventProcessor> eventLoops();
}
