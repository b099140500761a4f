package io.gantry.queue.kafka;

import io.gantry.queue.config.LiveConfig;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.core.DispatchPolicy;
import io.gantry.queue.core.FairSharePolicy;
import io.gantry.queue.core.QueueCore;
import io.gantry.queue.core.Shards;
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

/**
 * Starts the queue's event loop with the application and gives HTTP a safe way to read the core. Split by cohort
 * tree ({@code gantry.queue.shards} > 1) it runs one loop per shard, each a unit of its own (consumer group,
 * transactional id, snapshots, owner among the instances), each taking the jobs of the tenants {@link Shards} gives
 * it; shard 0 also decides the configuration.
 */
@Context
public class QueueProcessor implements AutoCloseable, io.gantry.runtime.http.OwnedWork, io.gantry.runtime.http.EventLoops {
    /** The most shards a queue may be split into. */
    public static final int MAX_SHARDS = 64;
    private final List<EventProcessor> processors = new java.util.ArrayList<>();
    private final io.gantry.runtime.http.UnitOwners units;
    /** The newest handler of each processor (since its loop's last start). */
    private final java.util.Map<EventProcessor, QueueHandler> handlers = new java.util.concurrent.ConcurrentHashMap<>();

    public QueueProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                          @Value("${gantry.kafka.partitions:1}") int partitions,
                          @Value("${gantry.queue.shards:1}") int shards,
                          QueueConfig config, io.gantry.runtime.http.Instance instance) {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new IllegalArgumentException("gantry.queue.shards: between 1 and " + MAX_SHARDS + ", was " + shards);
        }
        Clock clock = Clock.systemUTC();
        // topics first: the configuration history is read before the loop starts, and invalid settings stop the
        // start here, with their message
        io.gantry.runtime.kafka.KafkaSecurity security = instance.kafkaSecurity();
        KafkaTopics.ensureAll(bootstrap, partitions, security);
        LiveConfig.startup(config, LiveConfig.readHistory(bootstrap, security), clock.instant(), false,
                refusal(shards));
        List<String> names = new java.util.ArrayList<>();
        for (int i = 0; i < shards; i++) {
            EventProcessor.Builder b = instance.configure(EventProcessor.builder(Service.QUEUE, bootstrap));
            if (shards > 1) {
                b.unit("shard-" + i, i);
            }
            EventProcessor[] self = new EventProcessor[1];
            self[0] = b.loop(loop(config, () -> TopicReader.readAll(bootstrap, security, Topics.QUEUE_CONFIG_EVENTS), clock,
                            new FairSharePolicy(), Duration.ofSeconds(1), i, shards)
                            .observed(h -> handlers.put(self[0], (QueueHandler) h)))
                    .partitions(partitions)
                    .clock(clock)
                    .build();
            processors.add(self[0]);
            names.add(Integer.toString(i));
        }
        units = new io.gantry.runtime.http.UnitOwners("shard", names, processors);
        processors.forEach(EventProcessor::start);
    }

    /**
     * What a start or restart refuses besides invalid settings: split, pins that cannot hold, and a change that moves
     * a tenant's shard ({@code before} null: nothing was published, so nothing moves).
     */
    private static java.util.function.BiFunction<io.gantry.queue.core.FairShareConfig,
            io.gantry.queue.core.FairShareConfig, List<String>> refusal(int shards) {
        return (before, next) -> Shards.refusals(before == null ? null : Shards.of(before, shards),
                Shards.of(next, shards));
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
        return loop(config, configHistory, clock, policy, tickEvery, 0, 1);
    }

    /**
     * The loop of shard {@code shard} of {@code shards}: it takes its tenants' jobs only; a shard other than 0 also
     * reads the configurations shard 0 publishes ({@code queue.config-events}) and follows them.
     */
    public static ServiceLoop loop(QueueConfig config, Supplier<List<QueueConfigEvent>> configHistory, Clock clock,
                                   DispatchPolicy policy, Duration tickEvery, int shard, int shards) {
        List<io.gantry.schemas.Topic<?>> inputs = new java.util.ArrayList<>(List.of(Topics.ADMISSION_JOB_EVENTS,
                Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.RECOVERY_JOB_EVENTS,
                Topics.PLACEMENT_NODE_EVENTS, Topics.RECOVERY_NODE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                Topics.ADMISSION_SUSPENSION_EVENTS, Topics.BILLING_BUDGET_EVENTS,
                Topics.PLACEMENT_UTILISATION_EVENTS));
        if (shard != 0) {
            inputs.add(Topics.QUEUE_CONFIG_EVENTS);
        }
        return new ServiceLoop(Service.QUEUE, inputs,
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
                        clock.instant(), true, refusal(shards)), config, clock, policy, shard, shards));
    }

    /** How the last start rebuilt shard 0's state (from a snapshot and the history after it, or the whole history). */
    public io.gantry.runtime.kafka.EventProcessor.Restored lastRestore() {
        return processors.get(0).lastRestore();
    }

    /** The service's clock, for reads that age usage history. */
    public java.time.Instant now() {
        return Clock.systemUTC().instant();
    }

    /** Runs {@code query} on shard 0's loop thread (the one loop unless split) against the current core. */
    public <T> T read(Function<QueueCore, T> query) throws InterruptedException, ExecutionException, TimeoutException {
        return readShard(0, (h, core) -> query.apply(core));
    }

    /**
     * Runs {@code query} on shard {@code shard}'s loop thread against its handler (its shards say which tenants it
     * has) and core; the shard must be owned here.
     */
    public <T> T readShard(int shard, java.util.function.BiFunction<QueueHandler, QueueCore, T> query)
            throws InterruptedException, ExecutionException, TimeoutException {
        EventProcessor p = processors.get(shard);
        return p.submit(out -> {
            QueueHandler h = handlers.get(p);
            return query.apply(h, h.core());
        }).get(10, TimeUnit.SECONDS);
    }

    /**
     * Runs {@code command} on shard 0's loop thread (the one that decides the configuration) against its handler,
     * with an output in its transaction.
     */
    public <T> T command(java.util.function.BiFunction<QueueHandler, io.gantry.runtime.kafka.Output, T> command)
            throws InterruptedException, ExecutionException, TimeoutException {
        EventProcessor p = processors.get(0);
        return p.<T>submit(out -> command.apply(handlers.get(p), out)).get(30, TimeUnit.SECONDS);
    }

    /** The shards owned here, by index (every shard's index when not split and owned). */
    public List<Integer> ownedShards() {
        List<Integer> out = new java.util.ArrayList<>();
        for (int i = 0; i < processors.size(); i++) {
            if (processors.get(i).isOwner()) {
                out.add(i);
            }
        }
        return out;
    }

    /**
     * Who owns which tenant's jobs under the live configuration, as the newest handler here knows it (shard 0's when
     * it has one); null before any loop started.
     */
    public Shards shards() {
        for (EventProcessor p : processors) {
            QueueHandler h = handlers.get(p);
            if (h != null) {
                return h.shards();
            }
        }
        return null;
    }

    /** Who owns which shard, for the requests HTTP routes when split ({@code Units}). */
    public io.gantry.runtime.http.UnitOwners units() {
        return units;
    }

    /** Whether the queue is split by cohort tree into shards. */
    public boolean split() {
        return units.split();
    }

    /**
     * Whether this instance owns the queue's work and has its state (a standby forwards its requests); split,
     * whether every shard is placed: owned here and restored, or owned by another instance.
     */
    public boolean isReady() {
        return split() ? units.allPlaced() : processors.get(0).isOwner();
    }

    @Override
    public boolean forwardsToOwner() {
        return !split();
    }

    @Override
    public io.gantry.runtime.kafka.Ownership ownership() {
        return processors.get(0).ownership();
    }

    @PreDestroy
    @Override
    public void close() {
        processors.forEach(EventProcessor::close);
    }

    @Override
    public java.util.List<EventProcessor> eventLoops() {
        return List.copyOf(processors);
    }
}
