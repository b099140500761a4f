package io.gantry.launcher.load;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSubmitted;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the three topics on the submit -> placed path from their end, as a read_committed consumer outside any
 * group (it commits nothing and shows up in no lag figure): JobSubmitted (admission), the first JobDispatched
 * (queue) and AllocationGranted (placement). A grant is "observed" when poll() returns it, so the figure includes
 * placement's transaction commit and this consumer's fetch, as any downstream reader would see it.
 */
public final class EventWatcher implements AutoCloseable {
    private static final List<Topic<?>> TOPICS = List.of(Topics.ADMISSION_JOB_EVENTS, Topics.QUEUE_JOB_EVENTS,
            Topics.PLACEMENT_ALLOCATION_EVENTS);

    private final KafkaConsumer<String, byte[]> consumer;
    private final JobLedger ledger;
    private final Thread thread;
    private final CountDownLatch positioned = new CountDownLatch(1);
    private final AtomicLong undecodable = new AtomicLong();
    private volatile boolean running = true;
    private volatile Exception failure;

    public EventWatcher(String bootstrap, Map<String, String> security, JobLedger ledger) {
        this.ledger = ledger;
        Map<String, Object> p = new java.util.HashMap<>(security);
        p.putAll(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100, // a fetch returns once data is readable; this paces idle polls
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000));
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
        this.thread = new Thread(this::loop, "lt-watcher");
        this.thread.setDaemon(true);
    }

    /** Starts reading from the current end of each topic; returns once the positions are fixed. */
    public void start(Duration timeout) throws InterruptedException {
        thread.start();
        if (!positioned.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the event watcher could not find the topics " + TOPICS
                    + (failure != null ? ": " + failure : ""));
        }
    }

    private void loop() {
        try {
            List<TopicPartition> parts = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(120);
            for (Topic<?> t : TOPICS) {
                List<PartitionInfo> infos = List.of();
                while (running && infos.isEmpty() && Instant.now().isBefore(deadline)) {
                    infos = consumer.partitionsFor(t.name(), Duration.ofSeconds(5));
                    if (infos == null || infos.isEmpty()) {
                        infos = List.of();
                        TimeUnit.MILLISECONDS.sleep(200);
                    }
                }
                infos.forEach(p -> parts.add(new TopicPartition(p.topic(), p.partition())));
            }
            consumer.assign(parts);
            consumer.seekToEnd(parts);
            parts.forEach(consumer::position); // make the lazy seek happen now, before the first submission
            positioned.countDown();
            while (running) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    handle(r, System.nanoTime());
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Exception e) {
            failure = e;
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    private void handle(ConsumerRecord<String, byte[]> r, long nanos) {
        try {
            if (r.topic().equals(Topics.PLACEMENT_ALLOCATION_EVENTS.name())) {
                AllocationEvent e = AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS, r.value());
                if (e.getPayload() instanceof AllocationGranted) {
                    ledger.granted(e.getJobId(), r.timestamp(), nanos);
                } else if (e.getPayload() instanceof PlacementDeferred) {
                    ledger.deferred(e.getJobId());
                }
            } else if (r.topic().equals(Topics.QUEUE_JOB_EVENTS.name())) {
                QueueJobEvent e = AvroWire.decode(Topics.QUEUE_JOB_EVENTS, r.value());
                if (e.getPayload() instanceof JobDispatched) {
                    ledger.dispatched(e.getJobId(), r.timestamp());
                }
            } else {
                AdmissionJobEvent e = AvroWire.decode(Topics.ADMISSION_JOB_EVENTS, r.value());
                if (e.getPayload() instanceof JobSubmitted) {
                    ledger.submitted(e.getJobId(), r.timestamp());
                }
            }
        } catch (RuntimeException e) {
            undecodable.incrementAndGet();
        }
    }

    /** Records the watcher could not decode (e.g. written with a schema newer than the harness's). */
    public long undecodable() {
        return undecodable.get();
    }

    public Exception failure() {
        return failure;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(5000);
    }
}
