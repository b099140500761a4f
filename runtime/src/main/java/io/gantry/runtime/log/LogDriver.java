package io.gantry.runtime.log;

import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.TransientFailureException;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs services' real {@link EventHandler}s over an {@link InMemoryLog} in virtual time, one batch at a time, with
 * the semantics {@link io.gantry.runtime.kafka.EventProcessor} gives them on Kafka:
 * <ul>
 *   <li>at (re)start a fresh handler from the factory restores from its restore topics (beginning to end), then
 *       {@code restored} runs as its own batch;</li>
 *   <li>a batch is every pending input record (in the order they were written, across the service's input topics,
 *       at most {@code maxBatch}), then the tick if one is due; its outputs are appended and its input offsets
 *       advance together when it commits, and not at all when it does not ({@link #crashDuringNextBatch});</li>
 *   <li>a record whose handling throws goes to {@code <service>.dead-letter} (with its source and the error) and
 *       the batch goes on; a {@link TransientFailureException} aborts the batch and restarts the service;</li>
 *   <li>{@code caughtUp} is called once per start, in the batch that reaches the ends the inputs had at start.</li>
 * </ul>
 * Time moves only in {@link #advanceTo}: the driver processes everything pending, then jumps to the next due tick.
 * A handler that says when its next time-driven work is due ({@link EventHandler#nextTickAt}) is ticked then
 * instead of at every interval. Processing itself takes no virtual time. Deterministic: the same inputs give the
 * same log.
 */
public final class LogDriver {
    private final InMemoryLog log;
    private final VirtualClock clock;
    private final boolean wire;
    private final int maxBatch;
    private final Map<Service, Svc> services = new LinkedHashMap<>();

    private LogDriver(Builder b) {
        this.log = b.log;
        this.clock = b.clock;
        this.wire = b.wire;
        this.maxBatch = b.maxBatch;
        b.services.forEach(s -> services.put(s.owner, s));
    }

    public static Builder builder(VirtualClock clock) {
        return new Builder(clock);
    }

    public InMemoryLog log() {
        return log;
    }

    public VirtualClock clock() {
        return clock;
    }

    /** Restores every service and runs until nothing is pending. */
    public LogDriver start() {
        for (Svc s : services.values()) {
            begin(s);
        }
        runUntilIdle();
        return this;
    }

    /** A record written by someone outside the driven services (a client, a test, a recorded history). */
    public <V> void publish(Topic<V> topic, String key, V value) {
        log.append(topic.name(), key, onTheWire(topic, value), clock.instant(), Map.of());
    }

    /** Handles every pending input of every service, over and over, until none is left. Time does not move. */
    public void runUntilIdle() {
        boolean any = true;
        while (any) {
            any = false;
            for (Svc s : services.values()) {
                if (s.pendingCaughtUp || hasPending(s)) {
                    batch(s, false);
                    any = true;
                }
            }
        }
    }

    /** Processes, ticks and moves time forward until {@code t}: every tick due on the way runs at its own time. */
    public void advanceTo(Instant t) {
        runUntilIdle();
        while (true) {
            Instant next = services.values().stream().map(s -> s.nextTick).min(Comparator.naturalOrder())
                    .orElse(t);
            if (next.isAfter(t)) {
                break;
            }
            clock.moveTo(next);
            for (Svc s : services.values()) {
                if (!s.nextTick.isAfter(clock.instant())) {
                    batch(s, true);
                }
            }
            runUntilIdle();
        }
        clock.moveTo(t);
        runUntilIdle();
    }

    /** When the next tick of any service is due ({@link Instant#MAX} when none is). */
    public Instant nextDue() {
        return services.values().stream().map(s -> s.nextTick).min(Comparator.naturalOrder()).orElse(Instant.MAX);
    }

    public void advanceBy(Duration d) {
        advanceTo(clock.instant().plus(d));
    }

    /**
     * Runs {@code command} on the service's loop as a batch of its own (outputs committed with it), as an HTTP
     * adapter does through {@code EventProcessor.submit}.
     */
    public <T> T command(Service owner, Function<Output, T> command) {
        Svc s = svc(owner);
        Batch out = new Batch(s);
        T result = command.apply(out);
        commit(s, out, Map.of());
        schedule(s);
        runUntilIdle();
        return result;
    }

    /**
     * The service ticks at the current time, before time moves on: for a change its handler cannot see coming
     * (e.g. a simulated node failed or came back behind its back).
     */
    public void tickNow(Service owner) {
        svc(owner).nextTick = clock.instant();
    }

    /** A restart (after a crash or a deploy): a fresh handler rebuilt from the restore topics; offsets stay. */
    public void restart(Service owner) {
        begin(svc(owner));
        runUntilIdle();
    }

    /** How many records a restart of the service reads: the whole of its restore topics. */
    public long restoreRecords(Service owner) {
        long n = 0;
        for (Topic<?> t : svc(owner).restore) {
            n += log.end(t.name());
        }
        return n;
    }

    /**
     * The service crashes in its next batch after handling its records but before the commit: nothing of that batch
     * is kept, and it restarts.
     */
    public void crashDuringNextBatch(Service owner) {
        svc(owner).crashNext = true;
    }

    /** How many input records the service has handled (committed batches only), for decision counts. */
    public long handled(Service owner) {
        return svc(owner).handled;
    }

    /** Every record on {@code topic}, in order. */
    public <V> List<V> values(Topic<V> topic) {
        return log.values(topic);
    }

    // ---------------------------------------------------------------------------------------------------------

    /**
     * A restart from a snapshot of the service's state taken now (its handler's {@link EventHandler#snapshot}, as the
     * Kafka processor takes them after a commit): a fresh handler restored from the snapshot's records alone (nothing
     * of the history follows it, as nothing came after). Returns how many records it restored, or -1 when the
     * handler takes no snapshots (nothing restarted).
     */
    public long restartFromSnapshot(Service owner) {
        Svc s = svc(owner);
        List<Object[]> records = new ArrayList<>();
        boolean taken = s.handler.snapshot(new io.gantry.runtime.kafka.SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                records.add(new Object[]{topic, key, onTheWire(topic, value)});
            }
        });
        if (!taken) {
            return -1;
        }
        begin(s, h -> records.forEach(r -> io.gantry.runtime.kafka.Restores.restore(h, (Topic<?>) r[0],
                (String) r[1], r[2], s.owner.name(), "from the snapshot")));
        runUntilIdle();
        return records.size();
    }

    private void begin(Svc s) {
        begin(s, h -> {
            for (Topic<?> t : s.restore) {
                for (InMemoryLog.Entry e : log.from(t.name(), 0)) {
                    io.gantry.runtime.kafka.Restores.restore(h, t, e.key(), e.value(), s.owner.name(), "in memory");
                }
            }
        });
    }

    private void begin(Svc s, java.util.function.Consumer<EventHandler> restore) {
        s.handler = s.factory.get();
        restore.accept(s.handler);
        Batch out = new Batch(s);
        s.handler.restored(out);
        commit(s, out, Map.of());
        s.targets.clear();
        for (Topic<?> t : s.inputs) {
            s.targets.put(t.name(), log.end(t.name()));
        }
        s.pendingCaughtUp = true;
        s.fixedTick = clock.instant();
        s.nextTick = clock.instant();
    }

    private boolean hasPending(Svc s) {
        for (Topic<?> t : s.inputs) {
            if (s.offsets.getOrDefault(t.name(), 0L) < log.end(t.name())) {
                return true;
            }
        }
        return false;
    }

    private void batch(Svc s, boolean tick) {
        List<InMemoryLog.Entry> pending = new ArrayList<>();
        for (Topic<?> t : s.inputs) {
            pending.addAll(log.from(t.name(), s.offsets.getOrDefault(t.name(), 0L)));
        }
        pending.sort(Comparator.comparingLong(InMemoryLog.Entry::sequence));
        if (pending.size() > maxBatch) {
            pending = pending.subList(0, maxBatch);
        }
        Batch out = new Batch(s);
        Map<String, Long> consumed = new HashMap<>();
        try {
            for (InMemoryLog.Entry e : pending) {
                Topic<?> topic = s.topic(e.topic());
                try {
                    s.handler.handle(topic, e.key(), e.value(), out);
                } catch (TransientFailureException ex) {
                    throw ex;
                } catch (Exception ex) {
                    out.deadLetter(e, ex);
                }
                consumed.put(e.topic(), e.offset() + 1);
            }
            s.handler.batchHandled(out);
            if (s.pendingCaughtUp && reached(s, consumed)) {
                s.pendingCaughtUp = false;
                s.handler.caughtUp(clock.instant(), out);
            }
            if (tick) {
                s.handler.tick(clock.instant(), out);
            }
        } catch (TransientFailureException ex) {
            begin(s);
            return;
        }
        if (s.crashNext) {
            s.crashNext = false;
            begin(s);
            return;
        }
        commit(s, out, consumed);
        s.handled += pending.size();
        if (tick) {
            s.fixedTick = clock.instant().plus(s.tickEvery);
        }
        schedule(s);
    }

    /** The handler's own next due time when it knows one, else the next tick of the fixed interval. */
    private void schedule(Svc s) {
        Instant due = s.handler.nextTickAt(clock.instant());
        if (due == null) {
            s.nextTick = s.fixedTick;
        } else {
            s.nextTick = due.isBefore(clock.instant()) ? clock.instant() : due;
        }
    }

    private boolean reached(Svc s, Map<String, Long> consumed) {
        for (Map.Entry<String, Long> t : s.targets.entrySet()) {
            long position = consumed.getOrDefault(t.getKey(), s.offsets.getOrDefault(t.getKey(), 0L));
            if (position < t.getValue()) {
                return false;
            }
        }
        return true;
    }

    private void commit(Svc s, Batch out, Map<String, Long> consumed) {
        Instant now = clock.instant();
        for (Pending p : out.records) {
            log.append(p.topic, p.key, p.value, now, p.headers);
        }
        s.offsets.putAll(consumed);
    }

    private Object onTheWire(Topic<?> topic, Object value) {
        if (!wire || value instanceof byte[]) {
            return value;
        }
        @SuppressWarnings("unchecked")
        Topic<Object> t = (Topic<Object>) topic;
        return AvroWire.decode(t, AvroWire.encode(t, value));
    }

    private Svc svc(Service owner) {
        Svc s = services.get(owner);
        if (s == null) {
            throw new IllegalArgumentException("no service " + owner + " in this driver");
        }
        return s;
    }

    private record Pending(String topic, String key, Object value, Map<String, String> headers) {
    }

    /** A batch's outputs, appended only when it commits. */
    private final class Batch implements Output {
        private final Svc svc;
        private final List<Pending> records = new ArrayList<>();

        Batch(Svc svc) {
            this.svc = svc;
        }

        @Override
        public <V> void send(Topic<V> topic, String key, V value) {
            Objects.requireNonNull(key, "key");
            if (topic.owner() != svc.owner) {
                throw new IllegalStateException(svc.owner + " may not write " + topic + " (its writer is "
                        + topic.owner() + ")");
            }
            // encoded here, as the Kafka sink does: a record that cannot be encoded fails the handler's call
            records.add(new Pending(topic.name(), key, onTheWire(topic, value), Map.of()));
        }

        void deadLetter(InMemoryLog.Entry e, Exception ex) {
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("gantry.source.topic", e.topic());
            headers.put("gantry.source.offset", Long.toString(e.offset()));
            headers.put("gantry.error", ex.toString());
            records.add(new Pending(Topics.deadLetter(svc.owner).name(), e.key(), e.value(), headers));
        }
    }

    private static final class Svc {
        final Service owner;
        final Supplier<? extends EventHandler> factory;
        final List<Topic<?>> inputs;
        final List<Topic<?>> restore;
        final Duration tickEvery;
        final Map<String, Topic<?>> byName = new HashMap<>();
        final Map<String, Long> offsets = new HashMap<>();
        final Map<String, Long> targets = new HashMap<>();
        EventHandler handler;
        boolean pendingCaughtUp;
        boolean crashNext;
        long handled;
        /** The next tick of the fixed interval, and the next tick due (earlier when the handler says so). */
        Instant fixedTick;
        Instant nextTick;

        Svc(Service owner, Supplier<? extends EventHandler> factory, List<Topic<?>> inputs, List<Topic<?>> restore,
            Duration tickEvery) {
            this.owner = owner;
            this.factory = factory;
            this.inputs = List.copyOf(inputs);
            this.restore = List.copyOf(restore);
            this.tickEvery = tickEvery;
            inputs.forEach(t -> byName.put(t.name(), t));
            restore.forEach(t -> byName.put(t.name(), t));
        }

        Topic<?> topic(String name) {
            return byName.get(name);
        }
    }

    public static final class Builder {
        private final VirtualClock clock;
        private final List<Svc> services = new ArrayList<>();
        private InMemoryLog log = new InMemoryLog();
        private boolean wire;
        private int maxBatch = 500;

        private Builder(VirtualClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
        }

        /**
         * A service's loop: its handler factory (called at every start), the topics it consumes, the topics it
         * rebuilds its state from, and how often it ticks. Services run in the order they are added.
         */
        public Builder service(Service owner, Supplier<? extends EventHandler> handler, List<Topic<?>> inputs,
                               List<Topic<?>> restoreFrom, Duration tickEvery) {
            for (Topic<?> t : inputs) {
                if (t.owner() == owner) {
                    throw new IllegalArgumentException(owner + " must not consume its own topic " + t + " as input");
                }
            }
            services.add(new Svc(owner, handler, inputs, restoreFrom, tickEvery));
            return this;
        }

        /** A service's loop as it declares it for production. */
        public Builder service(io.gantry.runtime.kafka.ServiceLoop loop) {
            return service(loop.owner(), loop.handler(), loop.inputs(), loop.restoreFrom(), loop.tickEvery());
        }

        /** Encode and decode every record with its topic's Avro schema, as on Kafka (default: objects as they are). */
        public Builder encodeOnTheWire(boolean on) {
            this.wire = on;
            return this;
        }

        /** Records per batch at most (Kafka's max.poll.records; default 500). */
        public Builder maxBatch(int n) {
            this.maxBatch = n;
            return this;
        }

        /** A log that already holds a history (default: an empty one). */
        public Builder log(InMemoryLog existing) {
            this.log = existing;
            return this;
        }

        public LogDriver build() {
            return new LogDriver(this);
        }
    }
}
