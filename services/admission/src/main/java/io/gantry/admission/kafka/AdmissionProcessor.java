package io.gantry.admission.kafka;

import io.gantry.admission.db.JobStore;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;

import java.time.Duration;

/**
 * Runs the admission event loop: at-least-once (the handler writes PostgreSQL idempotently), inputs the four
 * job topics and the node topic. The node topic is also a restore topic, so the cluster limits are rebuilt from
 * its beginning on every (re)start before any input is handled; after that, new registrations arrive as input.
 */
@Context
public class AdmissionProcessor implements AutoCloseable, io.gantry.runtime.http.EventLoops,
        io.gantry.runtime.http.ClusterReporter {
    private final EventProcessor processor;

    public AdmissionProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                              @Value("${gantry.kafka.partitions:1}") int partitions,
                              JobStore store, ClusterLimitsHolder limits, io.gantry.runtime.http.Instance instance) {
        this.processor = instance.configure(EventProcessor.builder(Service.ADMISSION, bootstrap))
                .transactional(false)
                .inputs(AdmissionHandler.inputs())
                .restoreFrom(AdmissionHandler.restoreTopics())
                .partitions(partitions)
                .handler(() -> new AdmissionHandler(store, limits))
                .build()
                .start();
    }

    public boolean isReady() {
        return processor.isReady();
    }

    /**
     * Whether this instance exports admission's cluster-wide series (jobs by state, the job-lifecycle counters,
     * consumer lag, dead letters): the one the group gave the first partition of {@code admission.job-events}.
     */
    @Override
    public boolean reportsCluster() {
        return processor.reportsCluster();
    }

    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return processor.awaitReady(timeout);
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
