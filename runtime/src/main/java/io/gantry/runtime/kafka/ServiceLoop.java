package io.gantry.runtime.kafka;

import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What one service's event loop consists of: the topics it consumes, the topics it rebuilds its state from, how often
 * it ticks, and the handler (a fresh one at every start). Declared once per service and run either on Kafka by
 * {@link EventProcessor} or in virtual time by {@link io.gantry.runtime.log.LogDriver}, so the protocol between the
 * services exists once.
 */
public record ServiceLoop(Service owner, List<Topic<?>> inputs, List<Topic<?>> restoreFrom, Duration tickEvery,
                          Supplier<? extends EventHandler> handler) {
    public ServiceLoop {
        Objects.requireNonNull(owner, "owner");
        inputs = List.copyOf(inputs);
        restoreFrom = List.copyOf(restoreFrom);
        Objects.requireNonNull(tickEvery, "tickEvery");
        Objects.requireNonNull(handler, "handler");
    }

    /** The same loop, telling {@code onStart} about each fresh handler (an HTTP adapter reads state through it). */
    public ServiceLoop observed(java.util.function.Consumer<? super EventHandler> onStart) {
        Supplier<? extends EventHandler> factory = handler;
        return new ServiceLoop(owner, inputs, restoreFrom, tickEvery, () -> {
            EventHandler h = factory.get();
            onStart.accept(h);
            return h;
        });
    }
}
