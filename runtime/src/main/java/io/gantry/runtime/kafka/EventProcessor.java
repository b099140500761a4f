package io.gantry.runtime.kafka;

import io.gantry.events.StateSnapshot;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One service's event loop: restore state, then consume inputs, call the handler, produce its output.
 *
 * <p>In transactional mode (queue, placement, recovery) the records a batch produces and the input offsets it
 * consumed commit in one Kafka transaction, and state is rebuilt on start from the restore topics (read
 * committed, beginning to end; on the service's own topics to an end past every transaction open at the start,
 * which the other units of a split service may hold): a crash at any instant neither loses nor repeats a decision.
 * In at-least-once mode (read models and ledgers that write to PostgreSQL) offsets are committed after the handler
 * returns and the handler must be idempotent.
 *
 * <p>A record that cannot be decoded, or whose handling throws, goes to {@code <service>.dead-letter} with
 * headers naming its source and the error, and the loop keeps going. Any Kafka failure restarts the loop with a
 * fresh handler from the factory, so in-memory state never diverges from what was committed.
 */
public final class EventProcessor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventProcessor.class);

    private final Service owner;
    /** The service's id, and the unit's name after a slash when the service is split into units (logs, clients). */
    private final String name;
    /** The unit of work this processor runs when its service is split into several, or null: the whole service. */
    private final String unit;
    /** This unit's index among the units of a split service; -1 when the service is one unit. */
    private final int unitIndex;
    private final String bootstrap;
    private final String groupId;
    private final String transactionalId;
    private final List<Topic<?>> inputs;
    private final List<Topic<?>> restoreTopics;
    private final Supplier<? extends EventHandler> handlerFactory;
    private final Duration tickInterval;
    /** How long a batch may stay open while input keeps coming (0: one commit per poll). */
    private final long commitIntervalNanos;
    private final long quietCommitIntervalNanos;
    private final long readModelFetchWaitMs;
    /** How long a restore waits without progress for transactions open on the service's own topics to end. */
    private final Duration openTransactionWait;
    /** Where snapshots of the state go, or null: none are taken (a service that shares its work, or switched off). */
    private final Topic<StateSnapshot> snapshotTopic;
    /** Input records handled between two snapshots. */
    private final long snapshotEvery;
    private volatile Restored lastRestore;
    private final Clock clock;
    private final Map<String, Object> clientOverrides;
    private final KafkaSecurity security;
    private final int partitions;
    /** Transactional mode: one instance of the service (the group's owner) holds all inputs and the state. */
    private final boolean singleOwner;
    private final Ownership ownership;
    /** Static group membership ({@code group.instance.id}), or null for a dynamic member. */
    private final String groupInstanceId;
    private final Duration sessionTimeout;
    private final Map<String, Topic<?>> topicsByName = new HashMap<>();
    private final ConcurrentLinkedQueue<Command<?>> commands = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile boolean running = true;
    /** The Error that stopped the loop for good (a broken build, out of memory), or null while it runs. */
    private volatile Throwable fatal;
    private volatile KafkaConsumer<String, byte[]> consumer;
    /**
     * Shared work: the partition whose holder exports the service's cluster-wide series (see {@link #reportsCluster});
     * null for a service with one owner, or one whose inputs are all followed whole by every instance.
     */
    private final TopicPartition leadPartition;
    /** The group's assignment to this instance while the loop runs (null between two runs). */
    private volatile CatchUp assignment;

    private EventProcessor(Builder b) {
        this.owner = b.owner;
        this.unit = b.unit;
        this.unitIndex = b.unit == null ? -1 : b.unitIndex;
        this.name = b.unit == null ? b.owner.id() : b.owner.id() + "/" + b.unit;
        this.bootstrap = b.bootstrap;
        // a unit of a split service is a consumer group (and so a transactional id) of its own
        this.groupId = b.groupId != null ? b.groupId : "gantry-" + b.owner.id() + (b.unit == null ? "" : "-" + b.unit);
        // one unit of work per service, so one transactional id: whichever instance owns the work uses it, and its
        // initTransactions fences the previous owner (a crashed or cut-off process) and aborts what it left open
        this.transactionalId = b.transactional ? groupId + "-0" : null;
        this.singleOwner = b.transactional;
        this.ownership = new Ownership(b.advertisedUrl, b.unit == null ? -1 : b.unitIndex);
        this.groupInstanceId = b.instanceId == null || b.instanceId.isBlank() ? null : groupId + "-" + b.instanceId;
        this.sessionTimeout = b.sessionTimeout;
        this.inputs = List.copyOf(b.inputs);
        this.restoreTopics = List.copyOf(b.restore);
        this.handlerFactory = b.handlerFactory;
        this.tickInterval = b.tickInterval;
        this.commitIntervalNanos = b.commitInterval.toNanos();
        this.quietCommitIntervalNanos = Math.max(b.commitInterval.toNanos(), b.quietCommitInterval.toNanos());
        this.readModelFetchWaitMs = b.readModelFetchWait.toMillis();
        this.openTransactionWait = b.openTransactionWait;
        this.snapshotTopic = b.transactional && b.snapshotEvery > 0 ? Topics.snapshots(b.owner) : null;
        this.snapshotEvery = b.snapshotEvery;
        this.clock = b.clock;
        this.clientOverrides = Map.copyOf(b.clientOverrides);
        this.security = b.security;
        this.partitions = b.partitions;
        for (Topic<?> t : inputs) {
            topicsByName.put(t.name(), t);
        }
        for (Topic<?> t : restoreTopics) {
            topicsByName.put(t.name(), t);
        }
        if (snapshotTopic != null) {
            topicsByName.put(snapshotTopic.name(), snapshotTopic);
        }
        for (Topic<?> t : inputs) {
            // a unit of a split service may read what another unit writes (the queue's shards follow the
            // configuration shard 0 publishes); a whole service reading its own output would feed itself
            if (t.owner() == owner && b.transactional && b.unit == null) {
                throw new IllegalArgumentException(owner + " must not consume its own topic " + t + " as input");
            }
        }
        this.leadPartition = singleOwner ? null : inputs.stream().filter(t -> !restoreTopics.contains(t)).findFirst()
                .map(t -> new TopicPartition(t.name(), 0)).orElse(null);
        this.thread = new Thread(this::runLoop, "gantry-" + name.replace('/', '-') + "-processor");
    }

    public static Builder builder(Service owner, String bootstrapServers) {
        return new Builder(owner, bootstrapServers);
    }

    public EventProcessor start() {
        thread.start();
        return this;
    }

    /** Waits until state is restored and the loop handles input. */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Ready: the state is restored and inputs are handled — or, for a service with one owner, this instance is a
     * standby in the group (it forwards requests to the owner and waits to take over).
     */
    public boolean isReady() {
        return ready.getCount() == 0 && running && fatal == null;
    }

    /**
     * The Error that stopped the loop for good, if one did: a {@link LinkageError} (a class of another build), out
     * of memory, anything but an exception. The loop does not restart after one (the next attempt would meet it
     * again); the instance reports it on {@code /health} (DOWN), so an orchestrator restarts it, and its consumer's
     * session lapses, so another instance takes the work over.
     */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(fatal);
    }

    /** The service's id, with the unit's name after a slash for a unit of a split service. */
    public String name() {
        return name;
    }

    /** Whether this instance owns the work (always true once ready for a service whose instances share it). */
    public boolean isOwner() {
        return !singleOwner ? isReady() : ownership.role() == Ownership.Role.OWNER && running;
    }

    /**
     * Whether this instance exports the series that describe the whole cluster rather than its own work (admission's
     * jobs by state and consumer lag, billing's month-to-date figures: read from a view every instance holds, so each
     * would report the same figure and a sum over instances would multiply it). Exactly one instance does at a time,
     * the one that owns the work: for a service with one owner, the owner; for a service whose instances share the
     * work, the one the consumer group gave partition 0 of the first input it shares out (the group gives each
     * partition to one member per generation, and takes it from a member whose session lapsed). During a rebalance
     * no instance may report for a moment; a member cut off from the group reports until it hears so.
     */
    public boolean reportsCluster() {
        if (singleOwner) {
            return isOwner();
        }
        if (!isReady()) {
            return false;
        }
        if (leadPartition == null) {
            return true; // nothing is shared out: every instance does all the work
        }
        CatchUp held = assignment;
        return held != null && held.holds(leadPartition);
    }

    /** How the last start of the loop rebuilt its state (null before the first). */
    public Restored lastRestore() {
        return lastRestore;
    }

    /**
     * How a start rebuilt the state: from a snapshot's records (0 when there was none to use) and the records of the
     * restore topics after it (the whole history without a snapshot), in how long.
     */
    public record Restored(long snapshotRecords, long historyRecords, Duration took) {
    }

    /** Where this instance stands among the service's instances, and where the owner is. */
    public Ownership ownership() {
        return ownership;
    }

    /**
     * Runs {@code command} on the loop thread between batches, inside the batch's transaction, and completes with
     * its result. This is how HTTP adapters read or change a core's state safely.
     */
    public <T> CompletableFuture<T> submit(Function<Output, T> command) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Throwable stopped = fatal;
        if (stopped != null) {
            result.completeExceptionally(new IllegalStateException(name + " processor stopped: " + stopped, stopped));
            return result;
        }
        if (singleOwner && ownership.role() == Ownership.Role.STANDBY) {
            result.completeExceptionally(new NotOwnerException(owner, ownership.ownerUrl().orElse(null)));
            return result;
        }
        commands.add(new Command<>(command, result));
        return result;
    }

    private static final class Command<T> implements Runnable {
        private final Function<Output, T> body;
        private final CompletableFuture<T> result;
        private Output out;
        private T value;
        private Throwable failure;

        Command(Function<Output, T> body, CompletableFuture<T> result) {
            this.body = body;
            this.result = result;
        }

        @Override
        public void run() {
            try {
                value = body.apply(out);
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        void complete() {
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(value);
            }
        }

        void fail(Throwable t) {
            result.completeExceptionally(t);
        }
    }

    private void runLoop() {
        long backoff = 500;
        while (running) {
            try {
                runOnce();
                backoff = 500;
            } catch (OwnershipLost e) {
                LOG.info("{} processor: {}; restarting as a standby", name, e.getMessage());
                rejoinAsNewMember();
            } catch (org.apache.kafka.clients.consumer.CommitFailedException e) {
                // an instance joined or left while a transaction was open: the group's generation moved, the broker
                // refused the batch's offsets and the transaction is aborted, so the state is rebuilt without it
                LOG.warn("{} processor: a rebalance refused the batch's offsets ({}); rebuilding state", name,
                        e.getMessage());
                rejoinAsNewMember();
            } catch (WakeupException e) {
                if (running) {
                    LOG.warn("{} processor woken up unexpectedly; restarting", name);
                }
            } catch (TransientFailureException e) {
                if (!running) {
                    break;
                }
                // expected while a database restarts or is out of reach (the handler says so): one line, no stack;
                // the batch is handled again from its committed offsets, nothing is lost
                LOG.warn("{} processor: {}; handling its input again in {} ms", name, e.getMessage(), backoff);
                LOG.debug("{} processor: the transient failure", name, e);
                rejoinAsNewMember();
                sleep(backoff);
                backoff = Math.min(backoff * 2, 10_000);
            } catch (Exception e) {
                if (!running) {
                    break;
                }
                LOG.error("{} processor failed; rebuilding state and restarting in {} ms", name, backoff, e);
                rejoinAsNewMember();
                sleep(backoff);
                backoff = Math.min(backoff * 2, 10_000);
            } catch (Error e) {
                // not an input's fault (a record's stack overflow is its poison, see handleRecord): a restart of the
                // loop would meet it again, so the loop stops where /health shows it and the work moves on
                fatal = e;
                failCommands(e);
                LOG.error("{} processor stopped: {}; this instance no longer handles its inputs and must be "
                        + "restarted (/health is DOWN)", name, e.toString(), e);
                return;
            }
        }
    }

    private void runOnce() throws Exception {
        KafkaTopics.ensureAll(bootstrap, partitions, security);
        KafkaProducer<String, byte[]> producer = null;
        // shared work: the inputs that are also restored (the views every instance keeps whole) are followed by
        // each instance on its own; the others are shared out by the group
        List<Topic<?>> followed = singleOwner ? List.of() : inputs.stream().filter(restoreTopics::contains).toList();
        List<Topic<?>> shared = inputs.stream().filter(t -> !followed.contains(t)).toList();
        try (KafkaConsumer<String, byte[]> c = newConsumer(groupId, false);
             KafkaConsumer<String, byte[]> follower = followed.isEmpty() ? null : newConsumer(null, false)) {
            this.consumer = c;
            EventHandler h = null;
            Sink sink = null;
            if (!singleOwner) {
                // shared work (at-least-once, by partition): every instance restores and handles its share at once
                producer = newProducer();
                h = handlerFactory.get();
                Map<TopicPartition, Long> restoredTo = restore(h);
                sink = new Sink(producer);
                EventHandler restored = h;
                Sink s = sink;
                runInBatch(producer, sink, () -> restored.restored(s), Map.of());
                if (follower != null) {
                    List<TopicPartition> parts = restoredTo.keySet().stream()
                            .filter(tp -> followed.stream().anyMatch(t -> t.name().equals(tp.topic()))).toList();
                    follower.assign(parts);
                    parts.forEach(tp -> follower.seek(tp, restoredTo.get(tp)));
                }
            }
            CatchUp catchUp = new CatchUp(c);
            this.assignment = catchUp;
            c.subscribe(shared.stream().map(Topic::name).toList(), catchUp);
            if (!singleOwner) {
                ready.countDown();
                LOG.info("{} processor ready: inputs {}", name, inputs);
            }
            Instant nextTick = clock.instant();
            Batch batch = null;
            // what the state covers, for snapshots: the restore topics' ends at the start, the inputs consumed since
            Map<TopicPartition, Long> restoredTo = Map.of();
            Map<TopicPartition, Long> consumed = new HashMap<>();
            long sinceSnapshot = 0;
            while (running) {
                long wait = batch == null ? Math.min(100, tickInterval.toMillis())
                        : quiet(batch, sink) ? Math.min(Math.min(100, tickInterval.toMillis()),
                                Math.max(0, (quietCommitIntervalNanos - batch.age()) / 1_000_000))
                        : Math.max(0, (commitIntervalNanos - batch.age()) / 1_000_000);
                ConsumerRecords<String, byte[]> records = c.poll(Duration.ofMillis(wait));
                ConsumerRecords<String, byte[]> tail = follower == null ? ConsumerRecords.empty()
                        : follower.poll(Duration.ZERO);
                if (singleOwner) {
                    if (h != null && catchUp.revoked) {
                        throw new OwnershipLost();
                    }
                    if (h == null && !c.assignment().isEmpty()) {
                        // the group made this instance the owner: fence the previous owner's transactional producer
                        // (its open transaction is aborted), then rebuild the state from what it committed
                        ownership.role(Ownership.Role.STARTING);
                        producer = newProducer();
                        producer.initTransactions();
                        h = handlerFactory.get();
                        restoredTo = restore(h);
                        sink = new Sink(producer);
                        EventHandler restored = h;
                        Sink s = sink;
                        runInBatch(producer, sink, () -> restored.restored(s), Map.of());
                        ownership.ownerUrl(ownership.advertisedUrl());
                        ownership.role(Ownership.Role.OWNER);
                        ready.countDown();
                        LOG.info("{} processor is the owner: inputs {}", name, c.assignment());
                        nextTick = clock.instant();
                    } else if (h == null) {
                        if (catchUp.joined) {
                            if (ownership.role() != Ownership.Role.STANDBY) {
                                LOG.info("{} processor is a standby; the owner is {}", name,
                                        ownership.ownerUrl().orElse("(no HTTP address)"));
                            }
                            ownership.role(Ownership.Role.STANDBY);
                            ready.countDown();
                            failCommands(new NotOwnerException(owner, ownership.ownerUrl().orElse(null)));
                        }
                        continue;
                    }
                }
                Instant now = clock.instant();
                boolean tickDue = !now.isBefore(nextTick);
                // checked after the records are handled: caught up means this poll's records are in the state
                boolean caughtUpNow = catchUp.reached();
                boolean nothingNew = records.isEmpty() && tail.isEmpty() && commands.isEmpty() && !tickDue && !caughtUpNow;
                if (nothingNew && batch == null) {
                    continue;
                }
                if (!nothingNew) {
                    if (batch == null) {
                        batch = new Batch(sink.sent);
                        begin(producer);
                    }
                    Batch b = batch;
                    EventHandler handler = h;
                    Sink out = sink;
                    for (ConsumerRecord<String, byte[]> r : tail) {
                        if (handleRecord(handler, out, r)) {
                            b.handled.add(r);
                        }
                    }
                    b.records += records.count() + tail.count();
                    for (ConsumerRecord<String, byte[]> r : records) {
                        if (handleRecord(handler, out, r)) {
                            b.handled.add(r);
                        }
                        b.offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    Command<?> command;
                    while ((command = commands.poll()) != null) {
                        command.out = out;
                        command.run();
                        b.done.add(command);
                    }
                    if (caughtUpNow) {
                        LOG.info("{} processor caught up with its inputs {}", name, c.assignment());
                        handler.caughtUp(now, out);
                    }
                    if (tickDue) {
                        handler.tick(now, out);
                    }
                }
                // a batch stays open while input keeps coming, up to the commit interval: one commit (a transaction,
                // or a database write and an offset commit) then covers several polls. A poll that brought nothing,
                // a command (its caller waits for the commit) or the catch-up ends it at once. A transactional batch
                // that has written nothing (its records only changed the state) holds no output back from anyone:
                // it stays open, through quiet polls too, up to the quiet commit interval.
                boolean quiet = quiet(batch, sink);
                if ((nothingNew && !quiet) || !batch.done.isEmpty() || caughtUpNow
                        || batch.age() >= (quiet ? quietCommitIntervalNanos : commitIntervalNanos)) {
                    Batch b = batch;
                    batch = null;
                    EventHandler handler = h;
                    Sink out = sink;
                    end(producer, sink, () -> batchHandled(handler, out, b.handled), b.offsets);
                    b.done.forEach(Command::complete);
                    if (snapshotTopic != null && singleOwner) {
                        b.offsets.forEach((tp, o) -> consumed.put(tp, o.offset()));
                        sinceSnapshot += b.records;
                        if (sinceSnapshot >= snapshotEvery) {
                            // between two batches the state is exactly what is committed
                            sinceSnapshot = takeSnapshot(producer, sink, handler, restoredTo, consumed)
                                    ? 0 : Long.MIN_VALUE;
                        }
                    }
                }
                if (tickDue) {
                    nextTick = now.plus(tickInterval);
                }
            }
        } catch (Exception e) {
            failCommands(e);
            throw e;
        } finally {
            this.consumer = null;
            this.assignment = null;
            if (singleOwner) {
                ownership.role(Ownership.Role.STARTING);
            }
            if (producer != null) {
                producer.close(Duration.ofSeconds(5));
            }
        }
    }

    /** An open transactional batch that has sent nothing yet: committing it later delays no output. */
    private boolean quiet(Batch batch, Sink sink) {
        return transactionalId != null && batch != null && sink.sent == batch.sentBefore;
    }

    private void failCommands(Throwable e) {
        Command<?> cmd;
        while ((cmd = commands.poll()) != null) {
            cmd.fail(e);
        }
    }

    /** The group moved this owner's inputs to another instance: the loop starts again, as a standby. */
    private static final class OwnershipLost extends RuntimeException {
        OwnershipLost() {
            super("the inputs were assigned to another instance", null, false, false);
        }
    }

    /**
     * Whether the loop has read every input partition it was assigned up to the end that partition had when it
     * was assigned. A restarted consumer may wait long for its partitions (the group waits for a killed member's
     * session to time out), and a handler that measures silence must not mistake that wait for silence.
     */
    private static final class CatchUp implements ConsumerRebalanceListener {
        private final KafkaConsumer<String, byte[]> consumer;
        private final Map<TopicPartition, Long> targets = new HashMap<>();
        /** What the group gave this member, as the rebalances said (read by other threads). */
        private final java.util.Set<TopicPartition> held = ConcurrentHashMap.newKeySet();
        private boolean pending;
        /** Set by the first completed rebalance (called even when it assigned nothing). */
        private volatile boolean joined;
        /** Set when partitions held were taken away (or lost) by a rebalance. */
        private volatile boolean revoked;

        CatchUp(KafkaConsumer<String, byte[]> consumer) {
            this.consumer = consumer;
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            held.addAll(partitions);
            joined = true;
            if (partitions.isEmpty()) {
                return;
            }
            targets.putAll(consumer.endOffsets(partitions));
            pending = true;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            held.removeAll(partitions);
            if (!partitions.isEmpty()) {
                revoked = true;
            }
            partitions.forEach(targets::remove);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            onPartitionsRevoked(partitions);
        }

        boolean holds(TopicPartition partition) {
            return held.contains(partition);
        }

        /** True once per assignment: when the positions after the last poll have reached the targets. */
        boolean reached() {
            if (!pending) {
                return false;
            }
            for (Map.Entry<TopicPartition, Long> t : targets.entrySet()) {
                // the position is past every record poll returned (and past transaction markers once fetched)
                if (consumer.position(t.getKey()) < t.getValue()) {
                    return false;
                }
            }
            pending = false;
            return true;
        }
    }

    private void runInBatch(KafkaProducer<String, byte[]> producer, Sink sink, Runnable body,
                            Map<TopicPartition, OffsetAndMetadata> offsets) {
        begin(producer);
        end(producer, sink, body, offsets);
    }

    private void begin(KafkaProducer<String, byte[]> producer) {
        if (transactionalId != null) {
            producer.beginTransaction();
        }
    }

    /** Runs the batch's last step, then commits what it produced with the offsets it consumed. */
    private void end(KafkaProducer<String, byte[]> producer, Sink sink, Runnable last,
                     Map<TopicPartition, OffsetAndMetadata> offsets) {
        last.run();
        if (transactionalId != null) {
            if (!offsets.isEmpty()) {
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
            }
            producer.commitTransaction();
        } else {
            producer.flush();
            sink.throwIfFailed();
            if (!offsets.isEmpty()) {
                consumer.commitSync(offsets);
            }
        }
    }

    /** The records, offsets and commands of a batch not yet committed. */
    private static final class Batch {
        private final long openedAt = System.nanoTime();
        /** The sink's count of records sent when the batch opened. */
        private final long sentBefore;
        private final Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        private final List<ConsumerRecord<String, byte[]>> handled = new ArrayList<>();
        private final List<Command<?>> done = new ArrayList<>();
        private long records;

        Batch(long sentBefore) {
            this.sentBefore = sentBefore;
        }

        long age() {
            return System.nanoTime() - openedAt;
        }
    }

    /** Handles one record; false when it went to the dead letter instead. */
    private boolean handleRecord(EventHandler h, Sink sink, ConsumerRecord<String, byte[]> r) {
        Topic<?> topic = topicsByName.get(r.topic());
        Object value;
        try {
            value = AvroWire.decode(topic, r.value());
            if (value == null) {
                throw new IllegalArgumentException("null value (tombstone) on an event topic");
            }
        } catch (RuntimeException e) {
            if (unit != null && unitIndex != 0) {
                // every unit reads the record and fails alike: unit 0 sends it to the dead letter, once
                LOG.debug("{}: undecodable record {}-{}@{} left to unit 0's dead letter: {}", name, r.topic(),
                        r.partition(), r.offset(), e.toString());
                return false;
            }
            deadLetter(sink, r, e);
            return false;
        }
        try {
            h.handle(topic, r.key(), value, sink);
            return true;
        } catch (Exception e) {
            if (isKafkaFailure(e)) {
                throw (RuntimeException) e;
            }
            deadLetter(sink, r, e);
            return false;
        } catch (StackOverflowError e) {
            // a record nested deeper than the handler recurses: that record's fault, like an exception
            deadLetter(sink, r, new IllegalArgumentException("the record is nested too deep to handle", e));
            return false;
        }
    }

    /**
     * Ends a batch: the handler writes what it buffered. In at-least-once mode a write refused for good (not a
     * {@link TransientFailureException}: the record's fault, not the database's) must not stop the loop, and the
     * handler cannot tell which record of its batch caused it: the batch is handled again one record at a time,
     * each followed by its own write, so the record whose write fails goes to the dead letter alone and the others
     * are stored (their writes are idempotent, as redelivery requires anyway). A transactional handler's state has
     * taken the whole batch already: there a failure restarts the loop, which rebuilds the state.
     */
    private void batchHandled(EventHandler h, Sink sink, List<ConsumerRecord<String, byte[]>> handled) {
        try {
            h.batchHandled(sink);
        } catch (Exception e) {
            if (transactionalId != null || isKafkaFailure(e)) {
                throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
            }
            LOG.warn("{}: a batch of {} records could not be written ({}); writing them one by one", name,
                    handled.size(), e.toString());
            for (ConsumerRecord<String, byte[]> r : handled) {
                if (!handleRecord(h, sink, r)) {
                    continue;
                }
                try {
                    h.batchHandled(sink);
                } catch (Exception one) {
                    if (isKafkaFailure(one)) {
                        throw (RuntimeException) one;
                    }
                    deadLetter(sink, r, one);
                }
            }
        }
    }

    private static boolean isKafkaFailure(Exception e) {
        return e instanceof TransientFailureException
                || e instanceof org.apache.kafka.common.KafkaException
                && !(e instanceof org.apache.kafka.common.errors.SerializationException);
    }

    private void deadLetter(Sink sink, ConsumerRecord<String, byte[]> r, Exception e) {
        LOG.warn("{}: poison record {}-{}@{} sent to {}: {}", name, r.topic(), r.partition(), r.offset(),
                Topics.deadLetter(owner), e.toString());
        RecordHeaders headers = new RecordHeaders();
        headers.add("gantry.source.topic", r.topic().getBytes(StandardCharsets.UTF_8));
        headers.add("gantry.source.partition", Integer.toString(r.partition()).getBytes(StandardCharsets.UTF_8));
        headers.add("gantry.source.offset", Long.toString(r.offset()).getBytes(StandardCharsets.UTF_8));
        String error = e.toString();
        headers.add("gantry.error", error.substring(0, Math.min(error.length(), 4000)).getBytes(StandardCharsets.UTF_8));
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        String stack = trace.toString();
        headers.add("gantry.error.stack", stack.substring(0, Math.min(stack.length(), 4000)).getBytes(StandardCharsets.UTF_8));
        byte[] value = r.value();
        if (value != null && value.length > DEAD_LETTER_VALUE_LIMIT) {
            // the copy with its headers would be refused as too large, failing the transaction: the loop would meet
            // the record again after every restart and never get past it. The headers say where the original is
            headers.add("gantry.value.omitted", Integer.toString(value.length).getBytes(StandardCharsets.UTF_8));
            value = new byte[0];
        }
        sink.sendRaw(new ProducerRecord<>(Topics.deadLetter(owner).name(), null, r.key(), value, headers));
    }

    /**
     * The largest record value a dead-letter copy keeps: the producer refuses a record over 1 MiB with its headers
     * (up to 8 KiB here) and key, and an input its writer could send may be just under that.
     */
    static final int DEAD_LETTER_VALUE_LIMIT = 1_000_000;

    /**
     * Rebuilds the handler's state: the newest snapshot of its format when there is one, then each restore topic from
     * where the snapshot left it (else from its beginning) to its end as of now; returns those ends.
     */
    private Map<TopicPartition, Long> restore(EventHandler h) {
        if (restoreTopics.isEmpty()) {
            lastRestore = new Restored(0, 0, Duration.ZERO);
            return Map.of();
        }
        try (KafkaConsumer<String, byte[]> reader = newConsumer(null, true)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (Topic<?> t : restoreTopics) {
                List<PartitionInfo> infos = reader.partitionsFor(t.name(), Duration.ofSeconds(30));
                if (infos == null) {
                    continue;
                }
                infos.forEach(pi -> partitions.add(new TopicPartition(pi.topic(), pi.partition())));
            }
            long began = System.nanoTime();
            Snapshots.Found snapshot = snapshotTopic == null ? null
                    : Snapshots.readNewest(reader, snapshotTopic, snapshotFormat(h));
            reader.assign(partitions);
            Map<TopicPartition, Long> end = endOfOpenTransactions(reader, partitions);
            List<Object[]> fromSnapshot = snapshot == null ? List.of() : decoded(snapshot, end);
            if (snapshot != null && fromSnapshot == null) {
                snapshot = null;
                fromSnapshot = List.of();
            }
            for (Object[] r : fromSnapshot) {
                Restores.restore(h, (Topic<?>) r[0], (String) r[1], r[2], name, "from the snapshot");
            }
            Map<TopicPartition, Long> beginning = reader.beginningOffsets(partitions);
            for (TopicPartition tp : partitions) {
                reader.seek(tp, snapshot == null ? beginning.get(tp)
                        : Math.max(beginning.get(tp), snapshot.positions().getOrDefault(tp, 0L)));
            }
            long count = 0;
            long progressAt = System.nanoTime();
            long positions = positions(reader, partitions);
            while (partitions.stream().anyMatch(tp -> reader.position(tp) < end.get(tp))) {
                ConsumerRecords<String, byte[]> polled = reader.poll(Duration.ofMillis(200));
                long now = positions(reader, partitions);
                if (now != positions) {
                    positions = now;
                    progressAt = System.nanoTime();
                } else if (System.nanoTime() - progressAt > openTransactionWait.toNanos()) {
                    List<TopicPartition> behind = partitions.stream().filter(tp -> reader.position(tp) < end.get(tp))
                            .toList();
                    Map<TopicPartition, Long> stableNow = reader.endOffsets(behind);
                    if (behind.stream().allMatch(tp -> reader.position(tp) >= stableNow.get(tp))) {
                        // held back by a transaction nobody ends (a producer gone whose timeout the broker missed,
                        // or a hanging transaction): a state without what was committed after it began could grant
                        // twice, so the start fails and starts over (the loop's back-off), loudly, until it ends
                        throw new IllegalStateException(name + ": restoring, " + behind + " stayed behind a "
                                + "transaction open for more than " + openTransactionWait.toSeconds() + " s; starting "
                                + "over rather than going on without the records committed after it began (find it "
                                + "with kafka-transactions.sh find-hanging, end it with its abort command)");
                    }
                    // committed records are there but not coming (a broker away): wait on for them, as ever
                    progressAt = System.nanoTime();
                }
                for (ConsumerRecord<String, byte[]> r : polled) {
                    Topic<?> topic = topicsByName.get(r.topic());
                    Object value;
                    try {
                        value = AvroWire.decode(topic, r.value());
                    } catch (RuntimeException e) {
                        LOG.warn("{}: skipping undecodable record {}-{}@{} during restore: {}", name, r.topic(),
                                r.partition(), r.offset(), e.toString());
                        continue;
                    }
                    Restores.restore(h, topic, r.key(), value, name, r.partition() + "@" + r.offset());
                    count++;
                }
            }
            Duration took = Duration.ofNanos(System.nanoTime() - began);
            lastRestore = new Restored(fromSnapshot.size(), count, took);
            // restart time grows with the history after the newest snapshot: the figure an operator sizes by
            if (snapshot == null) {
                LOG.info("{} restored state from {} records of {} in {} ms", name, count, restoreTopics,
                        took.toMillis());
            } else {
                LOG.info("{} restored state from a snapshot of {} records (taken {}) and {} records of {} after it in"
                        + " {} ms", name, fromSnapshot.size(), snapshot.takenAt(), count, restoreTopics,
                        took.toMillis());
            }
            return end;
        }
    }

    /**
     * Where a restore reads to: the last stable offset (the end a read-committed reader sees now) of other services'
     * topics, whose records after it belong to transactions still open (their writer's, one per topic: an input
     * brings them, or nothing needs them); of this service's own topics, the end including every transaction open
     * now. Another unit of a split service writes those topics too, and a transaction of its still open keeps the
     * stable offset behind records this unit's previous owner committed after it began: read only to there, a
     * restore would lose them (a release of a run, and the run restored as live, released twice). The restore reads
     * on as those transactions end (committed or aborted); a dead producer's is aborted by the broker once its
     * timeout passes.
     */
    private Map<TopicPartition, Long> endOfOpenTransactions(KafkaConsumer<String, byte[]> reader,
                                                            List<TopicPartition> partitions) {
        Map<TopicPartition, Long> end = new HashMap<>(reader.endOffsets(partitions));
        List<TopicPartition> own = partitions.stream()
                .filter(tp -> topicsByName.get(tp.topic()).owner() == owner).toList();
        if (own.isEmpty()) {
            return end;
        }
        Map<TopicPartition, Long> stable = Map.copyOf(end);
        try (KafkaConsumer<String, byte[]> uncommitted = newConsumer(null, true, "read_uncommitted")) {
            uncommitted.endOffsets(own).forEach((tp, e) -> end.merge(tp, e, Math::max));
        }
        List<TopicPartition> open = own.stream().filter(tp -> end.get(tp) > stable.get(tp)).toList();
        if (!open.isEmpty()) {
            LOG.info("{}: restoring, transactions are open on {}: reading on as they end", name, open);
        }
        return end;
    }

    private static long positions(KafkaConsumer<String, byte[]> reader, List<TopicPartition> partitions) {
        long sum = 0;
        for (TopicPartition tp : partitions) {
            sum += reader.position(tp);
        }
        return sum;
    }

    /**
     * The snapshot's records decoded, as (topic, key, value); null when it cannot be used: a record that does not
     * decode, or a position past a restore topic's end (the topic was recreated). Then the whole history is read.
     */
    private List<Object[]> decoded(Snapshots.Found snapshot, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> p : snapshot.positions().entrySet()) {
            Long e = end.get(p.getKey());
            if (e == null || p.getValue() > e) {
                LOG.warn("{}: ignoring snapshot {}: it reads {} from {}, past its end {}; replaying the whole history",
                        name, snapshot.snapshotId(), p.getKey(), p.getValue(), e);
                return null;
            }
        }
        List<Object[]> out = new ArrayList<>(snapshot.entries().size());
        Topic<?> memory = Topics.snapshotMemory(owner).orElse(null);
        for (io.gantry.events.SnapshotEntry e : snapshot.entries()) {
            // the service's memory (state no restore topic holds) is named after the snapshot topic itself
            Topic<?> topic = memory != null && memory.name().equals(e.getTopic()) ? memory
                    : topicsByName.get(e.getTopic());
            try {
                if (topic == null || !restoreTopics.contains(topic) && topic != memory) {
                    throw new IllegalArgumentException("not a restore topic: " + e.getTopic());
                }
                java.nio.ByteBuffer b = e.getValue().duplicate();
                byte[] bytes = new byte[b.remaining()];
                b.get(bytes);
                out.add(new Object[]{topic, e.getKey(), AvroWire.decode(topic, bytes)});
            } catch (RuntimeException bad) {
                LOG.warn("{}: ignoring snapshot {}: {}; replaying the whole history", name,
                        snapshot.snapshotId(), bad.toString());
                return null;
            }
        }
        return out;
    }

    /** What a snapshot must have been written by to be read: the service, its handler, the build and its variant. */
    private String snapshotFormat(EventHandler h) {
        String build = EventProcessor.class.getPackage().getImplementationVersion();
        return owner.id() + " " + h.getClass().getName() + " " + (build == null ? "dev" : build)
                + (unit == null ? "" : " unit " + unit)
                + (h.snapshotVariant().isEmpty() ? "" : " " + h.snapshotVariant());
    }

    /**
     * Writes the handler's state as a snapshot, in a transaction of its own, right after a batch's commit. The
     * positions: each restore topic partition's end at the start, or further where this owner has written since
     * (its own topics) or consumed since (restore topics that are inputs too). False when the handler takes none.
     */
    private boolean takeSnapshot(KafkaProducer<String, byte[]> producer, Sink sink, EventHandler h,
                                 Map<TopicPartition, Long> restoredTo, Map<TopicPartition, Long> consumed) {
        long began = System.nanoTime();
        Snapshots.Collector collector = new Snapshots.Collector(
                restoreTopics.stream().map(Topic::name).collect(java.util.stream.Collectors.toSet()),
                Topics.snapshotMemory(owner).orElse(null));
        try {
            if (!h.snapshot(collector)) {
                return false;
            }
        } catch (RuntimeException e) {
            LOG.error("{}: the handler failed to write a snapshot; no more snapshots until the next start", name,
                    e);
            return false;
        }
        Map<TopicPartition, Long> positions = new HashMap<>();
        restoredTo.forEach((tp, end) -> positions.put(tp, Math.max(end,
                Math.max(sink.written.getOrDefault(tp, 0L), consumed.getOrDefault(tp, 0L)))));
        List<StateSnapshot> parts = collector.parts(snapshotFormat(h), clock.instant(), positions);
        producer.beginTransaction();
        for (StateSnapshot part : parts) {
            // partition 0 whatever the topic has (an operator may have created it with more): the parts stay in order
            sink.sendRaw(new ProducerRecord<>(snapshotTopic.name(), 0, Snapshots.key(unit, part),
                    AvroWire.encode(snapshotTopic, part)));
        }
        producer.commitTransaction();
        LOG.info("{} took a snapshot of {} records in {} parts in {} ms", name, collector.records(),
                parts.size(), (System.nanoTime() - began) / 1_000_000);
        return true;
    }

    private KafkaProducer<String, byte[]> newProducer() {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "gantry-" + name.replace('/', '-') + "-producer");
        if (transactionalId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 30_000);
            // a transaction begun right after a commit often finds the coordinator still writing the last one's
            // markers (CONCURRENT_TRANSACTIONS) and retries after this backoff: at the 100 ms default that wait
            // sat on every hop of a job
            p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        }
        p.putAll(clientOverrides);
        return new KafkaProducer<>(security.on(p), new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * A consumer in {@code group} (null: none, partitions assigned by hand); {@code restoring}: one that reads up to
     * ends it knows, never waiting for new records.
     */
    private KafkaConsumer<String, byte[]> newConsumer(String group, boolean restoring) {
        return newConsumer(group, restoring, "read_committed");
    }

    private KafkaConsumer<String, byte[]> newConsumer(String group, boolean restoring, String isolation) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "gantry-" + name.replace('/', '-') + (group == null ? "-restore" : "-consumer"));
        if (restoring) {
            // a restore reads up to ends it knows and never waits for new records: a fetch that includes a partition
            // already read to its end must not idle for the broker's default 500 ms wait while the others have
            // records (it did, once per MiB fetched: 80,000 records took 5-6 s instead of under one)
            p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5);
            p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        }
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) sessionTimeout.toMillis());
            // a rebalance (a member left, the owner stopped) reaches a member with its next heartbeat: at most 1 s
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, (int) Math.max(300, Math.min(1000, sessionTimeout.toMillis() / 3)));
            if (groupInstanceId != null) {
                // a restarted instance takes its place back at once instead of waiting out the dead one's session
                p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, groupInstanceId);
            }
            if (!singleOwner && readModelFetchWaitMs > 0) {
                // a read model is written once per poll: the broker gathers a batch for up to this long (or 256 KiB)
                // instead of answering each new record at once, so one database write covers many records
                p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 256 * 1024);
                p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, (int) readModelFetchWaitMs);
            }
            if (singleOwner) {
                // a new owner restores its state between two polls: a long history must not count as a hung member
                p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 600_000);
                p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, List.of(SingleOwnerAssignor.class));
                p.put(SingleOwnerAssignor.OWNERSHIP_CONFIG, ownership);
            }
        }
        p.putAll(clientOverrides);
        return new KafkaConsumer<>(security.on(p), new StringDeserializer(), new ByteArrayDeserializer());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        KafkaConsumer<String, byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(15_000);
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(5_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        leaveGroup();
    }

    /**
     * Stops the loop as a crash would, as far as the group can tell: the consumer closes without leaving the group
     * (a static member's place is kept until its session times out), so another instance takes over only then.
     */
    void halt() {
        running = false;
        KafkaConsumer<String, byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(15_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Before a unit of a split service restarts its loop: leaves the group, so the next consumer joins as a new
     * member. The unit may be in the middle of a hand-back (its holder revoked it and the rebalance that gives it to
     * the member it belongs to is started by the holder's rejoin): a new consumer with the same static instance id
     * would instead take the old member's place in the stable group without any rebalance, and the unit would stay
     * with no owner. Leaving costs a rebalance among the live members (and one more when this one joins).
     */
    private void rejoinAsNewMember() {
        if (unit != null && running) {
            leaveGroup();
        }
    }

    /**
     * A static member does not leave its group when its consumer closes (the group keeps its place for a restart);
     * on a deliberate stop it is removed, so another instance takes the work over at once.
     */
    private void leaveGroup() {
        if (groupInstanceId == null) {
            return;
        }
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(security.on(Map.of(
                org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                org.apache.kafka.clients.admin.AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000,
                org.apache.kafka.clients.admin.AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000)))) {
            admin.removeMembersFromConsumerGroup(groupId, new org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions(
                    List.of(new org.apache.kafka.clients.admin.MemberToRemove(groupInstanceId)))).all()
                    .get(6, TimeUnit.SECONDS);
            LOG.info("{} processor left group {} ({})", name, groupId, groupInstanceId);
        } catch (Exception e) {
            LOG.warn("{} processor could not leave group {} as {}: {} (the group waits out its session)", name,
                    groupId, groupInstanceId, e.toString());
        }
    }

    /** Produces into the current batch; remembers asynchronous send failures for the at-least-once mode. */
    private static final class Sink implements Output {
        private final KafkaProducer<String, byte[]> producer;
        private volatile Exception failure;
        /** Per partition written, the offset after the last record written there (acknowledged). */
        private final Map<TopicPartition, Long> written = new ConcurrentHashMap<>();
        /** Records sent so far (by the processor's thread only). */
        private long sent;

        Sink(KafkaProducer<String, byte[]> producer) {
            this.producer = producer;
        }

        @Override
        public <V> void send(Topic<V> topic, String key, V value) {
            Objects.requireNonNull(key, "key");
            sendRaw(new ProducerRecord<>(topic.name(), key, AvroWire.encode(topic, value)));
        }

        void sendRaw(ProducerRecord<String, byte[]> record) {
            sent++;
            producer.send(record, (meta, e) -> {
                if (e != null) {
                    failure = e;
                } else if (meta != null && meta.hasOffset()) {
                    written.merge(new TopicPartition(meta.topic(), meta.partition()), meta.offset() + 1, Math::max);
                }
            });
        }

        void throwIfFailed() {
            Exception e = failure;
            if (e != null) {
                failure = null;
                throw new org.apache.kafka.common.KafkaException("send failed", e);
            }
        }
    }

    public static final class Builder {
        private final Service owner;
        private final String bootstrap;
        private final List<Topic<?>> inputs = new ArrayList<>();
        private final List<Topic<?>> restore = new ArrayList<>();
        private final Map<String, Object> clientOverrides = new HashMap<>();
        private KafkaSecurity security = KafkaSecurity.NONE;
        private String groupId;
        private String unit;
        private int unitIndex = -1;
        private String instanceId;
        private String advertisedUrl = "";
        private Duration sessionTimeout = Duration.ofSeconds(10);
        private boolean transactional = true;
        private Supplier<? extends EventHandler> handlerFactory;
        private Duration tickInterval = Duration.ofSeconds(1);
        private Duration commitInterval = Duration.ZERO;
        private Duration quietCommitInterval = Duration.ZERO;
        private Duration readModelFetchWait = Duration.ZERO;
        private Duration openTransactionWait = Duration.ofSeconds(60);
        private long snapshotEvery;
        private Clock clock = Clock.systemUTC();
        private int partitions = 1;

        private Builder(Service owner, String bootstrap) {
            this.owner = owner;
            this.bootstrap = bootstrap;
        }

        /** The loop as the service declares it: inputs, restore topics, tick interval and handler. */
        public Builder loop(ServiceLoop loop) {
            if (loop.owner() != owner) {
                throw new IllegalArgumentException("the loop of " + loop.owner() + " given to " + owner + "'s processor");
            }
            inputs.addAll(loop.inputs());
            restore.addAll(loop.restoreFrom());
            this.tickInterval = loop.tickEvery();
            this.handlerFactory = loop.handler();
            return this;
        }

        public Builder inputs(Topic<?>... topics) {
            inputs.addAll(List.of(topics));
            return this;
        }

        public Builder restoreFrom(Topic<?>... topics) {
            restore.addAll(List.of(topics));
            return this;
        }

        /** Default true: outputs and offsets commit atomically. False: at-least-once with an idempotent handler. */
        public Builder transactional(boolean on) {
            this.transactional = on;
            return this;
        }

        /**
         * Runs one unit of a service split into several (placement's pools): its own consumer group
         * ({@code gantry-<service>-<unit>}), so its own transactional id and owner, and its own snapshots. Every
         * instance runs a processor per unit; unit {@code index} goes to the instance at {@code index} mod instances
         * in instance id order ({@link SingleOwnerAssignor}), so the units spread over the instances and a survivor
         * takes over a dead instance's units.
         */
        public Builder unit(String unitName, int index) {
            if (unitName == null || !unitName.matches("[a-z0-9][a-z0-9-]{0,62}") || index < 0) {
                throw new IllegalArgumentException("a unit is a lower-case name and an index >= 0, was " + unitName
                        + " #" + index);
            }
            this.unit = unitName;
            this.unitIndex = index;
            return this;
        }

        /** Consumer group; default {@code gantry-<service>} (or {@code gantry-<service>-<unit>}). */
        public Builder groupId(String id) {
            this.groupId = id;
            return this;
        }

        /**
         * This instance's id among the service's instances (static group membership: a restart with the same id
         * takes the place back at once); null or blank: a dynamic member. Two live instances must not share one.
         */
        public Builder instanceId(String id) {
            this.instanceId = id;
            return this;
        }

        /** This instance's HTTP base URL as the other instances reach it (a standby forwards requests there). */
        public Builder advertisedUrl(String url) {
            this.advertisedUrl = url;
            return this;
        }

        /**
         * How long the group waits for a silent member (a killed process) before its work moves: the bound on a
         * failover's wait. Default 10 s (the broker's minimum is 6 s by default).
         */
        public Builder sessionTimeout(Duration timeout) {
            this.sessionTimeout = timeout;
            return this;
        }

        public Builder handler(Supplier<? extends EventHandler> factory) {
            this.handlerFactory = factory;
            return this;
        }

        public Builder tickEvery(Duration interval) {
            this.tickInterval = interval;
            return this;
        }

        /**
         * How long a batch may stay open while input keeps coming: its records' outputs and offsets then commit
         * together, one transaction (or one database write and offset commit) for several polls instead of one per
         * poll. A poll that brings nothing, a command or the catch-up commits at once, so this is also the most a
         * record's output waits for its commit. Default zero: every poll commits.
         */
        public Builder commitInterval(Duration interval) {
            this.commitInterval = within(interval, Duration.ofSeconds(10), "commit interval");
            return this;
        }

        /**
         * How long a restore waits, without any progress, for transactions open on the service's own topics (another
         * unit's, or a dead producer's until the broker aborts it) before it fails and starts over (the loop's
         * back-off, an error each time) rather than go on without the records committed after they began. Default
         * 60 s: past the transaction timeout of Gantry's producers (30 s) and the broker's check for timed-out
         * transactions (every 10 s by default), so only a transaction nobody ends makes a start fail.
         */
        public Builder openTransactionWait(Duration wait) {
            this.openTransactionWait = within(wait, Duration.ofMinutes(10), "open-transaction wait");
            return this;
        }

        /**
         * How long a transactional batch that has sent nothing may stay open, through polls that bring nothing too:
         * its records only changed the state (e.g. recovery noting a grant), so no reader waits for its commit, and
         * one transaction then covers a second of such input instead of one per record. A record whose handling sends
         * something turns it into an ordinary batch, committed by the commit interval from the batch's start. What
         * it costs: on a crash the new owner handles up to this much input again (as it would any uncommitted input),
         * and the group's committed offsets trail the input by up to this much. Never shorter than the commit
         * interval; default zero (the commit interval alone). At-least-once processors (no transactions) ignore it.
         */
        public Builder quietCommitInterval(Duration interval) {
            this.quietCommitInterval = within(interval, Duration.ofSeconds(10), "quiet commit interval");
            return this;
        }

        /**
         * For a processor that is not transactional (a read model written to a database once per batch: admission's
         * jobs, billing's ledger): how long the broker may hold a fetch to gather more records (up to 256 KiB), so a
         * stream of single records becomes a few batches and a few database commits a second instead of one per
         * record. It adds at most this much to the read model's lag. Default zero: each fetch answers as soon as
         * anything is there. Transactional processors (on the path of a job's grant) ignore it.
         */
        public Builder readModelFetchWait(Duration wait) {
            this.readModelFetchWait = within(wait, Duration.ofSeconds(1), "read-model fetch wait");
            return this;
        }

        /**
         * Snapshot the state every this many input records (a service with one owner, whose handler takes
         * snapshots: {@link EventHandler#snapshot}), so a start reads the newest snapshot and the history after it
         * instead of the whole history. Default 0: never.
         */
        public Builder snapshotEvery(long records) {
            if (records < 0) {
                throw new IllegalArgumentException("snapshot interval must be >= 0 records, was " + records);
            }
            this.snapshotEvery = records;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Partitions for topics this processor creates when they are missing. */
        public Builder partitions(int n) {
            this.partitions = n;
            return this;
        }

        /** {@code d} when it is from 0 to {@code max}; else IllegalArgumentException naming {@code what}. */
        private static Duration within(Duration d, Duration max, String what) {
            if (d.isNegative() || d.compareTo(max) > 0) {
                throw new IllegalArgumentException(what + " must be from 0 to " + max.toMillis() + " ms, was " + d);
            }
            return d;
        }

        /** How every Kafka client of the loop authenticates and encrypts (default: plain). */
        public Builder security(KafkaSecurity security) {
            this.security = java.util.Objects.requireNonNull(security, "security");
            return this;
        }

        public Builder clientProperty(String key, Object value) {
            clientOverrides.put(key, value);
            return this;
        }

        public EventProcessor build() {
            Objects.requireNonNull(handlerFactory, "handler");
            return new EventProcessor(this);
        }
    }
}
