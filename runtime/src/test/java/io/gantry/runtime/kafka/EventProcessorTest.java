package io.gantry.runtime.kafka;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobCancelled;
import io.gantry.events.QueueJobEvent;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The processor against a real broker: a toy "queue" that answers every cancel request with a JobCancelled, and
 * remembers which jobs it has cancelled (its state) by replaying its own topic.
 */
class EventProcessorTest {
    private final EmbeddedKafka kafka = EmbeddedKafka.shared();
    private final List<EventProcessor> started = new ArrayList<>();

    /** State: jobs already cancelled; rebuilt from queue.job-events. Cancels each job at most once. */
    static class ToyHandler implements EventHandler {
        final Set<String> cancelled = new HashSet<>();
        int restored;
        int ticks;
        volatile int handled;
        volatile int handledWhenCaughtUp = -1;
        volatile int caughtUps;
        /** Only the test of fatal errors asks for one (the other tests' groups read its records too). */
        boolean stopsOnStale;

        @Override
        public void restore(Topic<?> topic, String key, Object value) {
            if (((QueueJobEvent) value).getPayload() instanceof JobCancelled) {
                cancelled.add(key);
                restored++;
            }
        }

        @Override
        public void handle(Topic<?> topic, String key, Object value, Output out) {
            AdmissionJobEvent e = (AdmissionJobEvent) value;
            handled++;
            if (!(e.getPayload() instanceof JobCancelRequested req)) {
                return;
            }
            if (req.getTenant().equals("boom")) {
                throw new IllegalArgumentException("tenant boom is poison");
            }
            if (req.getTenant().equals("deep")) {
                throw new StackOverflowError();
            }
            if (req.getTenant().equals("stale") && stopsOnStale) {
                throw new NoSuchMethodError("io.gantry.Gone.method() (a class of another build)");
            }
            if (cancelled.add(key)) {
                out.send(Topics.QUEUE_JOB_EVENTS, key, QueueJobEvent.newBuilder()
                        .setEventId(UUID.randomUUID().toString()).setJobId(key).setOccurredAt(Instant.now())
                        .setPayload(new JobCancelled(req.getTenant(), 0, req.getRequestedBy(), null)).build());
            }
        }

        @Override
        public void tick(Instant now, Output out) {
            ticks++;
        }

        @Override
        public void caughtUp(Instant now, Output out) {
            caughtUps++;
            if (handledWhenCaughtUp < 0) {
                handledWhenCaughtUp = handled;
            }
        }
    }

    private EventProcessor processor(String group, ToyHandler[] holder) {
        return processor(group, holder, null, Duration.ofSeconds(10));
    }

    private EventProcessor processor(String group, ToyHandler[] holder, String instanceId, Duration sessionTimeout) {
        return started(toy(group)
                .instanceId(instanceId)
                .advertisedUrl(instanceId == null ? "" : "http://" + instanceId + ".example:8080")
                .sessionTimeout(sessionTimeout)
                .tickEvery(Duration.ofMillis(100))
                .handler(() -> holder[0] = new ToyHandler()));
    }

    /** The toy's loop: cancel requests in, its cancellations restored. */
    private EventProcessor.Builder toy(String group) {
        return EventProcessor.builder(Service.QUEUE, kafka.bootstrapServers()).groupId(group)
                .inputs(Topics.ADMISSION_JOB_EVENTS).restoreFrom(Topics.QUEUE_JOB_EVENTS);
    }

    private EventProcessor started(EventProcessor.Builder b) {
        EventProcessor p = b.build().start();
        started.add(p);
        return p;
    }

    private static EventProcessor ready(EventProcessor p) throws InterruptedException {
        assertThat(p.awaitReady(Duration.ofSeconds(30))).isTrue();
        return p;
    }

    @AfterEach
    void stop() {
        started.forEach(EventProcessor::close);
    }

    @Test
    void answersEachInputOnceAndSurvivesARestartWithoutRepeatingItself() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = processor(group, h);
        assertThat(p.awaitReady(Duration.ofSeconds(30))).isTrue();
        String job = "job-" + UUID.randomUUID();
        sendCancel(job, "a");
        sendCancel(job, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(job) == 1);

        p.close();
        ToyHandler[] h2 = new ToyHandler[1];
        EventProcessor again = processor(group, h2);
        assertThat(again.awaitReady(Duration.ofSeconds(30))).isTrue();
        assertThat(h2[0].cancelled).contains(job);
        sendCancel(job, "a");
        String other = "job-" + UUID.randomUUID();
        sendCancel(other, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(other) == 1);
        assertThat(countCancelled(job)).isEqualTo(1);
        await().atMost(5, TimeUnit.SECONDS).until(() -> h2[0].ticks > 2);
    }

    @Test
    void aBatchStaysOpenWhileInputKeepsComingSoARunOfInputsCommitsInAFewTransactions() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = ready(started(toy(group).commitInterval(Duration.ofMillis(500))
                .handler(() -> h[0] = new ToyHandler())));
        await().atMost(20, TimeUnit.SECONDS).until(() -> h[0].caughtUps > 0); // the topic's older records are handled
        List<String> jobs = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            for (int i = 0; i < 20; i++) {
                String job = "job-" + UUID.randomUUID();
                jobs.add(job);
                int before = h[0].handled;
                producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), job,
                        AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel(job, "a")))).get();
                // one at a time, as a stream arrives: the next is sent once this one is handled, so each poll finds
                // one record
                await().pollInterval(Duration.ofMillis(2)).atMost(10, TimeUnit.SECONDS)
                        .until(() -> h[0].handled > before);
            }
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> readAll(Topics.QUEUE_JOB_EVENTS).stream()
                .filter(r -> jobs.contains(r.key())).count() == jobs.size());

        // a committed transaction's records lie side by side in a partition, its commit marker after them: each gap
        // between two answers in one partition is a commit
        Map<Integer, List<Long>> offsets = new java.util.TreeMap<>();
        readAll(Topics.QUEUE_JOB_EVENTS).stream().filter(r -> jobs.contains(r.key()))
                .forEach(r -> offsets.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset()));
        int transactions = 0;
        for (List<Long> inPartition : offsets.values()) {
            transactions++;
            for (int i = 1; i < inPartition.size(); i++) {
                if (inPartition.get(i) != inPartition.get(i - 1) + 1) {
                    transactions++;
                }
            }
        }
        assertThat(transactions).as("transactions for 20 inputs arriving one after another, one commit per poll"
                + " would take 20").isLessThanOrEqualTo(6);
    }

    @Test
    void aTransactionalBatchThatSentNothingCommitsAtTheQuietIntervalWhileABatchWithAnAnswerCommitsAtOnce()
            throws Exception {
        String group = "toy-" + UUID.randomUUID();
        ToyHandler[] h = new ToyHandler[1];
        ready(started(toy(group).quietCommitInterval(Duration.ofSeconds(10)).handler(() -> h[0] = new ToyHandler())));
        await().atMost(20, TimeUnit.SECONDS).until(() -> h[0].caughtUps > 0);
        String job = "job-" + UUID.randomUUID();
        RecordMetadata first = sendCancelAt(job);
        await().atMost(10, TimeUnit.SECONDS).until(() -> committed(group, first) > first.offset());

        // the same request again: the toy answers a job once, so this batch sends nothing and stays open
        int before = h[0].handled;
        RecordMetadata again = sendCancelAt(job);
        await().atMost(10, TimeUnit.SECONDS).until(() -> h[0].handled > before);
        await().during(Duration.ofMillis(1500)).atMost(3, TimeUnit.SECONDS)
                .until(() -> committed(group, again) <= again.offset());

        // a request with an answer joins the open batch, which then commits at once (commit interval 0), offsets
        // of the quiet record included, long before the quiet interval's 10 s
        String other = "job-" + UUID.randomUUID();
        long sentAt = System.nanoTime();
        sendCancelAt(other);
        await().atMost(5, TimeUnit.SECONDS).until(() -> countCancelled(other) == 1);
        assertThat(Duration.ofNanos(System.nanoTime() - sentAt)).isLessThan(Duration.ofSeconds(5));
        await().atMost(2, TimeUnit.SECONDS).until(() -> committed(group, again) > again.offset());
        assertThat(countCancelled(job)).isEqualTo(1);
    }

    /** Counts the batches that held at least one record of its run (other tests' records may come too). */
    static final class BatchCounter implements EventHandler {
        private final String run;
        private int inBatch;
        final java.util.concurrent.atomic.AtomicInteger batches = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger records = new java.util.concurrent.atomic.AtomicInteger();

        BatchCounter(String run) {
            this.run = run;
        }

        @Override
        public void handle(Topic<?> topic, String key, Object value, Output out) {
            if (key.endsWith(run)) {
                inBatch++;
            }
        }

        @Override
        public void batchHandled(Output out) {
            if (inBatch > 0) {
                records.addAndGet(inBatch);
                batches.incrementAndGet();
                inBatch = 0;
            }
        }
    }

    @Test
    void aReadModelsFetchWaitGathersAStreamOfSingleRecordsIntoAFewBatches() throws Exception {
        String run = UUID.randomUUID().toString();
        BatchCounter counter = new BatchCounter(run);
        EventProcessor p = EventProcessor.builder(Service.ADMISSION, kafka.bootstrapServers())
                .groupId("read-model-" + run).transactional(false).inputs(Topics.ADMISSION_JOB_EVENTS)
                .readModelFetchWait(Duration.ofMillis(500)).handler(() -> counter).build().start();
        started.add(p);
        ready(p);
        // a stream: one record every 10 ms, each sent on its own
        java.util.concurrent.ScheduledExecutorService every10ms = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            // the producer fetches its metadata first, so the stream below is not held back into one burst
            producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), "warm-up",
                    AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel("warm-up", "a")))).get();
            every10ms.scheduleWithFixedDelay(() -> {
                int i = sent.get();
                if (i < 20) {
                    String job = "job-" + i + "-" + run;
                    producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), job,
                            AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel(job, "a"))));
                    producer.flush();
                    sent.incrementAndGet();
                }
            }, 0, 10, TimeUnit.MILLISECONDS);
            await().atMost(10, TimeUnit.SECONDS).until(() -> sent.get() == 20);
        } finally {
            every10ms.shutdownNow();
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> counter.records.get() == 20);
        // without the wait each record sent 10 ms after the last is fetched, handled and written on its own
        assertThat(counter.batches.get()).as("database writes for 20 records sent over ~0.3 s").isLessThanOrEqualTo(4);
    }

    private RecordMetadata sendCancelAt(String job) throws Exception {
        try (KafkaProducer<String, byte[]> producer = producer()) {
            return producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), job,
                    AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel(job, "a")))).get();
        }
    }

    /** The group's committed offset on the record's partition (-1: none). */
    private long committed(String group, RecordMetadata record) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                    .get(new TopicPartition(record.topic(), record.partition()));
            return o == null ? -1 : o.offset();
        }
    }

    /** The toy, snapshotting: its state as one answer per job it cancelled (its history has nothing else). */
    static final class SnapshottingToy extends ToyHandler {
        @Override
        public boolean snapshot(SnapshotWriter out) {
            for (String job : new java.util.TreeSet<>(cancelled)) {
                out.add(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("snapshot-" + job)
                        .setJobId(job).setOccurredAt(Instant.EPOCH)
                        .setPayload(new JobCancelled("a", 0, "a", null)).build());
            }
            return true;
        }
    }

    private EventProcessor snapshotting(String group, ToyHandler[] holder, boolean takesSnapshots) {
        return started(toy(group).snapshotEvery(5)
                .handler(() -> holder[0] = takesSnapshots ? new SnapshottingToy() : new ToyHandler()));
    }

    @Test
    void aStartReadsTheNewestSnapshotAndOnlyTheHistoryAfterItAndAnswersNothingTwice() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = ready(snapshotting(group, h, true));
        assertThat(p.lastRestore().snapshotRecords()).isZero();
        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String job = "job-" + UUID.randomUUID();
            jobs.add(job);
            sendCancel(job, "a");
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> jobs.stream().allMatch(j -> countCancelled(j) == 1));
        p.close();
        long history = readAll(Topics.QUEUE_JOB_EVENTS).size();

        ToyHandler[] h2 = new ToyHandler[1];
        EventProcessor again = ready(snapshotting(group, h2, true));
        EventProcessor.Restored restored = again.lastRestore();
        assertThat(restored.snapshotRecords()).as("records from the snapshot").isGreaterThanOrEqualTo(5);
        assertThat(restored.historyRecords()).as("history read after the snapshot, of " + history)
                .isLessThan(history - 5);
        assertThat(h2[0].cancelled).containsAll(jobs);
        sendCancel(jobs.get(0), "a");
        String other = "job-" + UUID.randomUUID();
        sendCancel(other, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(other) == 1);
        assertThat(countCancelled(jobs.get(0))).as("answered before the snapshot: not again").isEqualTo(1);
        again.close();

        // a handler of another format ignores the snapshot and reads the whole history, to the same state
        ToyHandler[] h3 = new ToyHandler[1];
        EventProcessor plain = ready(snapshotting(group, h3, false));
        assertThat(plain.lastRestore().snapshotRecords()).isZero();
        assertThat(plain.lastRestore().historyRecords()).isGreaterThan(history);
        assertThat(h3[0].cancelled).containsAll(jobs).contains(other);
    }

    /**
     * Units of a split service write the same topics, each in transactions of its own: a transaction another unit
     * holds open keeps the topic's last stable offset (the end a read-committed reader sees) behind records this
     * unit's previous owner committed after it began. A start that restored only to that end lost them (a release
     * restored as a live run, released again: placement split by pool under kill -9).
     */
    @Test
    void aStartWaitsForTransactionsOpenOnItsOwnTopicsSoItRestoresWhatWasCommittedBehindThem() throws Exception {
        String behind = "job-" + UUID.randomUUID();
        String open = "job-" + UUID.randomUUID();
        try (KafkaProducer<String, byte[]> otherUnit = openWithCommittedBehind(open, behind)) {
            ToyHandler[] h = new ToyHandler[1];
            EventProcessor p = processor("toy-" + UUID.randomUUID(), h);
            assertThat(p.awaitReady(Duration.ofSeconds(2))).as("ready while a transaction before its end is open")
                    .isFalse();
            otherUnit.commitTransaction();
            ready(p);
            assertThat(h[0].cancelled).contains(behind, open);
        }
    }

    @Test
    void aTransactionThatDoesNotEndFailsTheStartUntilItEndsThenTheStartRestoresEverything() throws Exception {
        String behind = "job-" + UUID.randomUUID();
        String aborted = "job-" + UUID.randomUUID();
        try (KafkaProducer<String, byte[]> hung = openWithCommittedBehind(aborted, behind)) {
            ToyHandler[] h = new ToyHandler[1];
            EventProcessor p = started(toy("toy-" + UUID.randomUUID()).openTransactionWait(Duration.ofSeconds(1))
                    .handler(() -> h[0] = new ToyHandler()));
            assertThat(p.awaitReady(Duration.ofSeconds(5))).as("ready past a transaction that does not end").isFalse();
            hung.abortTransaction();
            ready(p);
            assertThat(h[0].cancelled).as("what was committed behind it, not what it aborted").contains(behind)
                    .doesNotContain(aborted);
        }
    }

    /**
     * On partition 0 of queue.job-events, a transaction of another writer left open holding {@code open}'s
     * cancellation, and {@code behind}'s committed by a third writer after it began; the open one's producer.
     */
    private KafkaProducer<String, byte[]> openWithCommittedBehind(String open, String behind) throws Exception {
        TopicPartition p0 = new TopicPartition(Topics.QUEUE_JOB_EVENTS.name(), 0);
        KafkaTopics.ensureAll(kafka.bootstrapServers(), 1);
        KafkaProducer<String, byte[]> other = begin(transactional("other-" + UUID.randomUUID()), cancelled(p0, open));
        try (KafkaProducer<String, byte[]> previous = transactional("previous-" + UUID.randomUUID())) {
            begin(previous, cancelled(p0, behind)).commitTransaction();
        }
        return other;
    }

    /** Begins a transaction of {@code producer} holding {@code record} (written, not committed). */
    private static KafkaProducer<String, byte[]> begin(KafkaProducer<String, byte[]> producer,
                                                       ProducerRecord<String, byte[]> record) throws Exception {
        producer.beginTransaction();
        producer.send(record).get();
        return producer;
    }

    private KafkaProducer<String, byte[]> transactional(String id) {
        KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, id), new StringSerializer(), new ByteArraySerializer());
        producer.initTransactions();
        return producer;
    }

    private static ProducerRecord<String, byte[]> cancelled(TopicPartition tp, String job) {
        return new ProducerRecord<>(tp.topic(), tp.partition(), job, AvroWire.encode(Topics.QUEUE_JOB_EVENTS,
                QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job)
                        .setOccurredAt(Instant.now()).setPayload(new JobCancelled("a", 0, "a", null)).build()));
    }

    @Test
    void saysItHasCaughtUpOnlyOnceTheBacklogThatWaitedForItIsHandledAndOnlyOnce() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor first = processor(group, h);
        assertThat(first.awaitReady(Duration.ofSeconds(30))).isTrue();
        await().atMost(20, TimeUnit.SECONDS).until(() -> h[0].caughtUps == 1);
        first.close();
        // a backlog on the input while nobody consumes it
        for (int i = 0; i < 30; i++) {
            sendCancel("backlog-" + UUID.randomUUID(), "a");
        }
        ToyHandler[] h2 = new ToyHandler[1];
        EventProcessor again = processor(group, h2);
        assertThat(again.awaitReady(Duration.ofSeconds(30))).isTrue();
        await().atMost(20, TimeUnit.SECONDS).until(() -> h2[0].caughtUps == 1);
        assertThat(h2[0].handledWhenCaughtUp).as("records handled before the handler heard it had caught up")
                .isEqualTo(30);
        sendCancel("later-" + UUID.randomUUID(), "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> h2[0].handled == 31);
        assertThat(h2[0].caughtUps).as("caught up once per assignment, not per batch").isEqualTo(1);
    }

    @Test
    void aRecordNoUnitOfASplitServiceCanDecodeGoesToTheDeadLetterOnce() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        for (int unit = 0; unit < 2; unit++) {
            ready(started(toy("toy-u" + unit + "-" + run).unit("u" + unit + "-" + run, unit)
                    .tickEvery(Duration.ofMillis(100)).handler(ToyHandler::new)));
        }
        String garbageKey = "garbage-" + UUID.randomUUID();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), garbageKey,
                    "not avro".getBytes(StandardCharsets.UTF_8))).get();
        }
        String good = "job-" + UUID.randomUUID();
        sendCancel(good, "a");
        // each unit has its own state and cancels the job once: both read past the garbage
        await().atMost(30, TimeUnit.SECONDS).until(() -> countCancelled(good) == 2);
        assertThat(readAll(Topics.deadLetter(Service.QUEUE))).filteredOn(r -> garbageKey.equals(r.key()))
                .as("unit 0 dead-letters it, unit 1 leaves it to unit 0").hasSize(1);
    }

    @Test
    void sendsUndecodableAndFailingRecordsToTheDeadLetterTopicAndKeepsGoing() throws Exception {
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = processor("toy-" + UUID.randomUUID(), h);
        assertThat(p.awaitReady(Duration.ofSeconds(30))).isTrue();
        String garbageKey = "garbage-" + UUID.randomUUID();
        String poisonKey = "poison-" + UUID.randomUUID();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), garbageKey,
                    "not avro".getBytes(StandardCharsets.UTF_8))).get();
        }
        sendCancel(poisonKey, "boom");
        String good = "job-" + UUID.randomUUID();
        sendCancel(good, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(good) == 1);
        List<ConsumerRecord<String, byte[]>> dead = readAll(Topics.deadLetter(Service.QUEUE));
        assertThat(dead).anySatisfy(r -> {
            assertThat(r.key()).isEqualTo(garbageKey);
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("not avro");
            assertThat(new String(r.headers().lastHeader("gantry.source.topic").value(), StandardCharsets.UTF_8))
                    .isEqualTo(Topics.ADMISSION_JOB_EVENTS.name());
        });
        assertThat(dead).anySatisfy(r -> {
            assertThat(r.key()).isEqualTo(poisonKey);
            assertThat(new String(r.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                    .contains("tenant boom is poison");
        });
    }

    @Test
    void aPoisonRecordTooLargeToCopyWithItsHeadersIsDeadLetteredWithoutItsValueAndTheLoopGoesOn() throws Exception {
        KafkaTopics.ensureAll(kafka.bootstrapServers(), 1);
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = ready(processor("toy-" + UUID.randomUUID(), h));
        String bigKey = "big-" + UUID.randomUUID();
        byte[] big = new byte[1_048_000]; // not Avro, just under what its writer may send (1 MiB with key and framing)
        java.util.Arrays.fill(big, (byte) 'x');
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), bigKey, big)).get();
        }
        String good = "job-" + UUID.randomUUID();
        sendCancel(good, "a");

        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(good) == 1);
        assertThat(readAll(Topics.deadLetter(Service.QUEUE))).filteredOn(r -> bigKey.equals(r.key())).singleElement()
                .satisfies(r -> {
                    assertThat(r.value()).isEmpty();
                    assertThat(new String(r.headers().lastHeader("gantry.value.omitted").value(),
                            StandardCharsets.UTF_8)).isEqualTo("1048000");
                    assertThat(r.headers().lastHeader("gantry.source.offset")).isNotNull();
                });
        assertThat(p.failure()).isEmpty();
    }

    /** The toy restoring its inputs too: a cancel request of tenant boom (or deep) it refuses there as well. */
    static class RestoresItsInputs extends ToyHandler {
        @Override
        public void restore(Topic<?> topic, String key, Object value) {
            if (value instanceof AdmissionJobEvent e && e.getPayload() instanceof JobCancelRequested req) {
                if (req.getTenant().equals("boom")) {
                    throw new IllegalArgumentException("tenant boom is poison");
                }
                if (req.getTenant().equals("deep")) {
                    throw new StackOverflowError();
                }
                return;
            }
            super.restore(topic, key, value);
        }
    }

    @Test
    void aRecordItsHandlerRefusesWhileRestoringIsSkippedSoItNeverStopsTheStart() throws Exception {
        // poison a live loop sent to the dead letter, on a topic the service also restores from
        KafkaTopics.ensureAll(kafka.bootstrapServers(), 1);
        sendCancel("poison-" + UUID.randomUUID(), "boom");
        sendCancel("deep-" + UUID.randomUUID(), "deep");
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = started(EventProcessor.builder(Service.QUEUE, kafka.bootstrapServers())
                .groupId("toy-" + UUID.randomUUID()).inputs(Topics.ADMISSION_JOB_EVENTS)
                .restoreFrom(Topics.QUEUE_JOB_EVENTS, Topics.ADMISSION_JOB_EVENTS).tickEvery(Duration.ofMillis(100))
                .handler(() -> h[0] = new RestoresItsInputs()));

        assertThat(p.awaitReady(Duration.ofSeconds(30))).as("started despite the records it cannot restore").isTrue();
        String good = "job-" + UUID.randomUUID();
        sendCancel(good, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(good) == 1);
        assertThat(p.failure()).isEmpty();
    }

    @Test
    void aStackOverflowIsItsRecordsPoisonButAnErrorStopsTheLoopVisiblyWithItsRecordUncommitted() throws Exception {
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = ready(started(toy("toy-" + UUID.randomUUID()).tickEvery(Duration.ofMillis(100))
                .handler(() -> {
                    h[0] = new ToyHandler();
                    h[0].stopsOnStale = true;
                    return h[0];
                })));
        String deep = "deep-" + UUID.randomUUID();
        sendCancel(deep, "deep");
        String good = "job-" + UUID.randomUUID();
        sendCancel(good, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(good) == 1);
        assertThat(readAll(Topics.deadLetter(Service.QUEUE))).anySatisfy(r -> {
            assertThat(r.key()).isEqualTo(deep);
            assertThat(new String(r.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                    .contains("nested too deep");
        });
        assertThat(p.failure()).isEmpty();

        String stale = "stale-" + UUID.randomUUID();
        sendCancel(stale, "stale");
        await().atMost(20, TimeUnit.SECONDS).until(() -> p.failure().isPresent());
        assertThat(p.failure().get()).isInstanceOf(NoSuchMethodError.class);
        assertThat(p.isReady()).isFalse();
        assertThat(p.submit(out -> 1)).failsWithin(Duration.ofSeconds(1));
        String after = "job-" + UUID.randomUUID();
        sendCancel(after, "a");
        // a stopped loop handles nothing more: no cancellation for a whole second
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> countCancelled(after) == 0);
        assertThat(readAll(Topics.deadLetter(Service.QUEUE))).as("an Error is no record's poison")
                .noneMatch(r -> stale.equals(r.key()));
    }

    @Test
    void runsSubmittedCommandsOnTheLoopThreadInsideTheTransaction() throws Exception {
        ToyHandler[] h = new ToyHandler[1];
        EventProcessor p = processor("toy-" + UUID.randomUUID(), h);
        assertThat(p.awaitReady(Duration.ofSeconds(30))).isTrue();
        String job = "job-" + UUID.randomUUID();
        Integer size = p.submit(out -> {
            h[0].handle(Topics.ADMISSION_JOB_EVENTS, job, cancel(job, "admin"), out);
            return h[0].cancelled.size();
        }).get(20, TimeUnit.SECONDS);
        assertThat(size).isPositive();
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(job) == 1);
    }

    @Test
    void ofTwoInstancesOneOwnsTheWorkAndTheStandbyTakesItOverWhenTheOwnerCrashesWithNothingLostOrDoubled()
            throws Exception {
        String group = "toy-" + UUID.randomUUID();
        Duration session = Duration.ofSeconds(6);
        ToyHandler[] ha = new ToyHandler[1];
        ToyHandler[] hb = new ToyHandler[1];
        EventProcessor a = ready(processor(group, ha, "a", session));
        EventProcessor b = ready(processor(group, hb, "b", session));
        // the first to join owns the work; one joining later does not move it
        assertThat(a.isOwner()).isTrue();
        assertThat(b.isOwner()).isFalse();
        assertThat(b.ownership().role()).isEqualTo(Ownership.Role.STANDBY);
        assertThat(hb[0]).as("a standby builds no state").isNull();
        await().atMost(10, TimeUnit.SECONDS).until(() -> b.ownership().ownerUrl().isPresent());
        assertThat(b.ownership().ownerUrl()).contains("http://a.example:8080");
        assertThat(b.submit(out -> 1)).failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(NotOwnerException.class)
                .withMessageContaining("the owner is http://a.example:8080");

        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            jobs.add("job-" + UUID.randomUUID());
            sendCancel(jobs.get(i), "a");
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> jobs.stream().allMatch(j -> countCancelled(j) == 1));

        long crashedAt = System.nanoTime();
        a.halt();
        for (int i = 10; i < 20; i++) {
            jobs.add("job-" + UUID.randomUUID());
            sendCancel(jobs.get(i), "a");
        }
        jobs.subList(0, 10).forEach(j -> {
            try {
                sendCancel(j, "a");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(40, TimeUnit.SECONDS).until(b::isOwner);
        Duration takeover = Duration.ofNanos(System.nanoTime() - crashedAt);
        // the group waits out the crashed member's session, then the standby restores and owns the work
        assertThat(takeover).isGreaterThanOrEqualTo(session.minusSeconds(1)).isLessThan(session.plusSeconds(20));
        assertThat(b.ownership().ownerUrl()).contains("http://b.example:8080");
        await().atMost(20, TimeUnit.SECONDS).until(() -> jobs.stream().allMatch(j -> countCancelled(j) >= 1));
        assertThat(jobs).allSatisfy(j -> assertThat(countCancelled(j)).as(j).isEqualTo(1));
        assertThat(hb[0].cancelled).containsAll(jobs);
        System.out.printf("takeover after a crash with a %d s session: %d ms%n", session.toSeconds(),
                takeover.toMillis());
    }

    @Test
    void anOwnerThatStopsOnPurposeHandsTheWorkOverWithoutWaitingForItsSession() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        Duration session = Duration.ofSeconds(30);
        ToyHandler[] ha = new ToyHandler[1];
        ToyHandler[] hb = new ToyHandler[1];
        EventProcessor a = ready(processor(group, ha, "a", session));
        EventProcessor b = ready(processor(group, hb, "b", session));
        assertThat(a.isOwner()).isTrue();
        String job = "job-" + UUID.randomUUID();
        sendCancel(job, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(job) == 1);

        long stoppedAt = System.nanoTime();
        a.close();
        await().atMost(session.minusSeconds(10)).until(b::isOwner);
        System.out.printf("takeover after a deliberate stop: %d ms%n", (System.nanoTime() - stoppedAt) / 1_000_000);
        String after = "job-" + UUID.randomUUID();
        sendCancel(after, "a");
        sendCancel(job, "a");
        await().atMost(20, TimeUnit.SECONDS).until(() -> countCancelled(after) == 1);
        assertThat(countCancelled(job)).isEqualTo(1);

        // the stopped instance comes back as the standby: the work stays where it is
        ToyHandler[] ha2 = new ToyHandler[1];
        EventProcessor again = processor(group, ha2, "a", session);
        assertThat(again.awaitReady(Duration.ofSeconds(30))).isTrue();
        assertThat(again.isOwner()).isFalse();
        assertThat(b.isOwner()).isTrue();
    }

    /** At-least-once: remembers the cancelled jobs it sees on queue.job-events and counts the requests it handled. */
    static final class SharingHandler implements EventHandler {
        final Set<String> seenCancelled = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final Set<String> requests = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public void restore(Topic<?> topic, String key, Object value) {
            seenCancelled.add(key);
        }

        @Override
        public void handle(Topic<?> topic, String key, Object value, Output out) {
            if (topic.equals(Topics.QUEUE_JOB_EVENTS)) {
                seenCancelled.add(key);
            } else {
                requests.add(key);
            }
        }
    }

    @Test
    void instancesThatShareTheWorkEachFollowTheTopicsTheyRestoreWholeAndSplitTheOthers() throws Exception {
        String group = "share-" + UUID.randomUUID();
        List<SharingHandler> handlers = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<EventProcessor> instances = new ArrayList<>();
        for (String id : List.of("a", "b")) {
            EventProcessor p = EventProcessor.builder(Service.ADMISSION, kafka.bootstrapServers())
                    .groupId(group).instanceId(id).transactional(false)
                    .inputs(Topics.ADMISSION_JOB_EVENTS, Topics.QUEUE_JOB_EVENTS)
                    .restoreFrom(Topics.QUEUE_JOB_EVENTS)
                    .partitions(2)
                    .handler(() -> {
                        SharingHandler h = new SharingHandler();
                        handlers.add(h);
                        return h;
                    })
                    .build().start();
            started.add(p);
            instances.add(p);
            assertThat(p.awaitReady(Duration.ofSeconds(30))).isTrue();
        }
        assertThat(instances).allMatch(EventProcessor::isOwner);
        String job = "job-" + UUID.randomUUID();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.QUEUE_JOB_EVENTS.name(), job,
                    AvroWire.encode(Topics.QUEUE_JOB_EVENTS, QueueJobEvent.newBuilder()
                            .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(Instant.now())
                            .setPayload(new JobCancelled("a", 0, "a", null)).build()))).get();
        }
        // both instances see a new record of a topic they keep whole, whoever holds its partition in the group
        await().atMost(20, TimeUnit.SECONDS).until(() -> handlers.size() == 2
                && handlers.stream().allMatch(h -> h.seenCancelled.contains(job)));
        List<String> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add("job-" + UUID.randomUUID());
            sendCancel(requests.get(i), "a");
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> handlers.stream()
                .mapToLong(h -> requests.stream().filter(h.requests::contains).count()).sum() >= requests.size());
        // the other inputs are shared out: each request handled by one instance
        assertThat(handlers.stream().mapToLong(h -> requests.stream().filter(h.requests::contains).count()).sum())
                .isEqualTo(requests.size());
    }

    @Test
    void ofInstancesThatShareTheWorkExactlyOneReportsTheClusterWideSeriesAndAnotherTakesOverWhenItStops()
            throws Exception {
        String group = "report-" + UUID.randomUUID();
        Map<String, EventProcessor> instances = new java.util.LinkedHashMap<>();
        for (String id : List.of("a", "b")) {
            EventProcessor p = EventProcessor.builder(Service.ADMISSION, kafka.bootstrapServers())
                    .groupId(group).instanceId(id).transactional(false)
                    .inputs(Topics.ADMISSION_JOB_EVENTS, Topics.QUEUE_JOB_EVENTS)
                    .restoreFrom(Topics.QUEUE_JOB_EVENTS)
                    .partitions(2)
                    .handler(SharingHandler::new)
                    .build().start();
            started.add(p);
            instances.put(id, ready(p));
        }
        // both handle their share of the work; one of them, the holder of the lead partition, reports the cluster
        await().atMost(20, TimeUnit.SECONDS).until(() -> instances.values().stream()
                .filter(EventProcessor::reportsCluster).count() == 1);
        // one reporter while the group is stable: the condition must hold for a whole second
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS).until(() -> instances.values().stream()
                .filter(EventProcessor::reportsCluster).count() == 1);
        String reporter = instances.entrySet().stream().filter(e -> e.getValue().reportsCluster())
                .map(Map.Entry::getKey).findFirst().orElseThrow();
        EventProcessor other = instances.get(reporter.equals("a") ? "b" : "a");
        assertThat(other.isOwner()).as("the other instance still does its share").isTrue();

        instances.get(reporter).close();
        assertThat(instances.get(reporter).reportsCluster()).as("a stopped instance reports nothing").isFalse();
        await().atMost(30, TimeUnit.SECONDS).until(other::reportsCluster);
    }

    @Test
    void ofTwoInstancesWithOneOwnerOnlyTheOwnerReportsTheClusterWideSeries() throws Exception {
        String group = "toy-" + UUID.randomUUID();
        EventProcessor a = ready(processor(group, new ToyHandler[1], "a", Duration.ofSeconds(6)));
        EventProcessor b = ready(processor(group, new ToyHandler[1], "b", Duration.ofSeconds(6)));
        assertThat(a.isOwner()).isTrue();
        assertThat(a.reportsCluster()).isTrue();
        assertThat(b.reportsCluster()).as("a standby reports nothing").isFalse();
    }

    /**
     * A read model that buffers its writes and stores each poll's in one go, as the PostgreSQL-backed handlers do: a
     * write of tenant "refused" is refused for good (as a NUL in text is), one of tenant "flaky" fails transiently the
     * first two times (as a database restarting does).
     */
    static final class BufferingHandler implements EventHandler {
        final Set<String> stored = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final java.util.concurrent.atomic.AtomicInteger flakyFailures;
        final List<AdmissionJobEvent> pending = new ArrayList<>();

        BufferingHandler(java.util.concurrent.atomic.AtomicInteger flakyFailures) {
            this.flakyFailures = flakyFailures;
        }

        @Override
        public void handle(Topic<?> topic, String key, Object value, Output out) {
            pending.add((AdmissionJobEvent) value);
        }

        @Override
        public void batchHandled(Output out) {
            try {
                for (AdmissionJobEvent e : pending) {
                    String tenant = ((JobCancelRequested) e.getPayload()).getTenant();
                    if (tenant.equals("refused")) {
                        throw new IllegalArgumentException("the store refuses " + e.getJobId());
                    }
                    if (tenant.equals("flaky") && flakyFailures.getAndIncrement() < 2) {
                        throw new TransientFailureException("the store is restarting", null);
                    }
                }
                pending.forEach(e -> stored.add(e.getJobId()));
            } finally {
                pending.clear();
            }
        }
    }

    @Test
    void aWriteRefusedForGoodSendsOnlyItsRecordToTheDeadLetterAndATransientFailureIsRetriedWithNothingLost()
            throws Exception {
        java.util.concurrent.atomic.AtomicInteger flaky = new java.util.concurrent.atomic.AtomicInteger();
        List<BufferingHandler> handlers = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.gantry.testkit.LogCapture log = io.gantry.testkit.LogCapture.start();
        EventProcessor p = EventProcessor.builder(Service.ADMISSION, kafka.bootstrapServers())
                .groupId("buffering-" + UUID.randomUUID()).transactional(false)
                .inputs(Topics.ADMISSION_JOB_EVENTS)
                .handler(() -> {
                    BufferingHandler h = new BufferingHandler(flaky);
                    handlers.add(h);
                    return h;
                })
                .build().start();
        started.add(p);
        ready(p);
        String run = UUID.randomUUID().toString();
        List<String> tenants = List.of("a", "a", "refused", "a", "flaky", "a");
        List<String> jobs = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 50),
                new StringSerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < tenants.size(); i++) {
                String job = "job-" + i + "-" + tenants.get(i) + "-" + run;
                jobs.add(job);
                producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), job,
                        AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel(job, tenants.get(i)))));
            }
            producer.flush();
        }
        List<String> good = jobs.stream().filter(j -> !j.contains("-refused-")).toList();
        String refused = jobs.get(2);
        await().atMost(30, TimeUnit.SECONDS).until(() -> handlers.get(handlers.size() - 1).stored.containsAll(good));
        assertThat(handlers.get(handlers.size() - 1).stored).doesNotContain(refused);
        assertThat(flaky.get()).as("the transient failures were retried").isGreaterThanOrEqualTo(3);
        // each one a line at WARN without a stack (an outage is no bug), never the ERROR of a failed processor
        List<ch.qos.logback.classic.spi.ILoggingEvent> logged = log.events().stream()
                .filter(e -> e.getLoggerName().equals(EventProcessor.class.getName())).toList();
        log.close();
        assertThat(logged).filteredOn(e -> e.getFormattedMessage().contains("the store is restarting"))
                .hasSizeGreaterThanOrEqualTo(2).allSatisfy(e -> {
                    assertThat(e.getLevel()).isEqualTo(ch.qos.logback.classic.Level.WARN);
                    assertThat(e.getThrowableProxy()).isNull();
                });
        assertThat(logged).noneMatch(e -> e.getLevel() == ch.qos.logback.classic.Level.ERROR);
        List<ConsumerRecord<String, byte[]>> dead = readAll(Topics.deadLetter(Service.ADMISSION)).stream()
                .filter(r -> r.key() != null && r.key().endsWith(run)).toList();
        // at least once: a transient failure after it redelivers the batch, so its copy may appear again, always
        // naming the same source offset
        assertThat(dead).isNotEmpty().allSatisfy(r -> {
            assertThat(r.key()).isEqualTo(refused);
            assertThat(new String(r.headers().lastHeader("gantry.source.offset").value(), StandardCharsets.UTF_8))
                    .isEqualTo(new String(dead.get(0).headers().lastHeader("gantry.source.offset").value(),
                            StandardCharsets.UTF_8));
            assertThat(new String(r.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                    .contains("the store refuses " + refused);
        });
    }

    private static AdmissionJobEvent cancel(String job, String tenant) {
        return AdmissionJobEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job)
                .setOccurredAt(Instant.now()).setPayload(new JobCancelRequested(tenant, tenant)).build();
    }

    private void sendCancel(String job, String tenant) throws Exception {
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.ADMISSION_JOB_EVENTS.name(), job,
                    AvroWire.encode(Topics.ADMISSION_JOB_EVENTS, cancel(job, tenant)))).get();
        }
    }

    private long countCancelled(String job) {
        return readAll(Topics.QUEUE_JOB_EVENTS).stream().filter(r -> job.equals(r.key())).count();
    }

    private KafkaProducer<String, byte[]> producer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new StringSerializer(), new ByteArraySerializer());
    }

    private List<ConsumerRecord<String, byte[]>> readAll(Topic<?> topic) {
        try (TopicClient client = new TopicClient(kafka.bootstrapServers())) {
            return client.readAllRaw(topic);
        }
    }

}
