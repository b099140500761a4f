package io.gantry.queue.kafka;

import io.gantry.queue.config.LiveConfig;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.core.DispatchPolicy;
import io.gantry.queue.core.FairSharePolicy;
import io.gantry.queue.core.QueueCore;
import io.gantry.events.QueueConfigEvent;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.ServiceLoop;
import io.gantry.runtime.kafka.TopicReader;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/** Starts the queue's event loop with the application and gives HTTP a safe way to read the core. */
@Context
public class QueueProcessor implements AutoCloseable, io.gantry.runtime.http.OwnedWork, io.gantry.runtime.http.EventLoops {
    private final EventProcessor processor;
    private volatile QueueHandler handler;

    public QueueProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                          @Value("${gantry.kafka.partitions:1}") int partitions,
                          QueueConfig config, io.gantry.runtime.http.Instance instance) {
        Clock clock = Clock.systemUTC();
        // topics first: the configuration history is read before the loop starts, and invalid settings stop the
        // start here, with their message
        KafkaTopics.ensureAll(bootstrap, partitions);
        LiveConfig.startup(config, LiveConfig.readHistory(bootstrap), clock.instant(), false);
        this.processor = instance.configure(EventProcessor.builder(Service.QUEUE, bootstrap))
                .loop(loop(config, () -> TopicReader.readAll(bootstrap, Topics.QUEUE_CONFIG_EVENTS), clock)
                        .observed(h -> handler = (QueueHandler) h))
                .partitions(partitions)
                .clock(clock)
                .build()
                .start();
    }

    /**
     * The queue's event loop, declared once: submissions, allocations, recovery decisions, node facts and money
     * budgets in; its own
     * topics to restore from; a tick every second (config file, parked re-checks, reservations). Each (re)start
     * decides the live configuration afresh from the committed history on {@code queue.config-events}.
     */
    public static ServiceLoop loop(QueueConfig config, Supplier<List<QueueConfigEvent>> configHistory, Clock clock) {
        return loop(config, configHistory, clock, new FairSharePolicy(), Duration.ofSeconds(1));
    }

    /**
     * The same loop with another dispatch policy (the simulator compares FIFO baselines with the production policy
     * through the core's seam) and tick interval (a replay of months ticks less often than a live service).
     */
    public static ServiceLoop loop(QueueConfig config, Supplier<List<QueueConfigEvent>> configHistory, Clock clock,
                                   DispatchPolicy policy, Duration tickEvery) {
        return new ServiceLoop(Service.QUEUE,
                List.of(Topics.ADMISSION_JOB_EVENTS, Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.RECOVERY_JOB_EVENTS,
                        Topics.PLACEMENT_NODE_EVENTS, Topics.RECOVERY_NODE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                        Topics.ADMISSION_SUSPENSION_EVENTS, Topics.BILLING_BUDGET_EVENTS,
                        Topics.PLACEMENT_UTILISATION_EVENTS),
                // utilisation windows are input only: each says since when the run is idle, and the warnings are
                // the queue's own facts (queue.idle-events), so nothing of them needs restoring.
                // checkpoints and suspend/resume requests too: kept only while their job is live (dropped when it
                // ends, whatever the order); budgets: billing's newest state of each, which holds jobs of an
                // exhausted HOLD budget
                List.of(Topics.QUEUE_JOB_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS, Topics.QUEUE_RESERVATION_EVENTS,
                        Topics.QUEUE_IDLE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS, Topics.ADMISSION_SUSPENSION_EVENTS,
                        Topics.BILLING_BUDGET_EVENTS),
                tickEvery,
                // a fresh core each time the loop (re)starts: state always comes from the committed topics
                () -> new QueueHandler(LiveConfig.startup(config, LiveConfig.history(configHistory.get()),
                        clock.instant(), true), config, clock, policy));
    }

    /** How the last start rebuilt the state (from a snapshot and the history after it, or the whole history). */
    public io.gantry.runtime.kafka.EventProcessor.Restored lastRestore() {
        return processor.lastRestore();
    }

    /** The service's clock, for reads that age usage history. */
    public java.time.Instant now() {
        return Clock.systemUTC().instant();
    }

    /** Runs {@code query} on the loop thread against the current core. */
    public <T> T read(Function<QueueCore, T> query) throws InterruptedException, ExecutionException, TimeoutException {
        return processor.submit(out -> query.apply(handler.core())).get(10, TimeUnit.SECONDS);
    }

    /** Runs {@code command} on the loop thread against the current handler, with an output in its transaction. */
    public <T> T command(java.util.function.BiFunction<QueueHandler, io.gantry.runtime.kafka.Output, T> command)
            throws InterruptedException, ExecutionException, TimeoutException {
        return processor.<T>submit(out -> command.apply(handler, out)).get(30, TimeUnit.SECONDS);
    }

    /** Whether this instance owns the queue's work and has its state (a standby forwards its requests). */
    public boolean isReady() {
        return processor.isOwner();
    }

    @Override
    public io.gantry.runtime.kafka.Ownership ownership() {
        return processor.ownership();
    }

    @PreDestroy
    @Override
    public void close() {
        processor.close();
    }

    @Override
    public java.util.List<EventProcessor> eventLoops() {
        return java.util.List.of(processor);
    }
}
