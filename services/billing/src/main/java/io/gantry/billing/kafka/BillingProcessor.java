package io.gantry.billing.kafka;

import io.gantry.billing.db.BillingStore;
import io.gantry.billing.db.Ledger;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.transaction.TransactionOperations;
import jakarta.annotation.PreDestroy;

import java.sql.Connection;
import java.time.Clock;

/**
 * Billing's event loop, at-least-once ({@code transactional(false)}): the ledger lives in PostgreSQL, not in
 * Kafka, so there is nothing to restore; idempotent inserts and stable event ids make redelivery harmless.
 */
@Context
public class BillingProcessor implements AutoCloseable, io.gantry.runtime.http.EventLoops,
        io.gantry.runtime.http.ClusterReporter {
    private final EventProcessor processor;

    public BillingProcessor(Ledger ledger, BillingStore store, KnownModels models,
                            TransactionOperations<Connection> tx,
                            @Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.kafka.partitions:1}") int partitions,
                            io.gantry.runtime.http.Instance instance, Clock billingClock) {
        Clock clock = Clock.systemUTC();
        this.processor = instance.configure(EventProcessor.builder(Service.BILLING, bootstrap))
                .inputs(Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.ADMISSION_JOB_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                        Topics.PLACEMENT_NODE_EVENTS, Topics.PLACEMENT_UTILISATION_EVENTS)
                .restoreFrom(Topics.PLACEMENT_NODE_EVENTS)
                .transactional(false)
                // rows are stamped by billing's clock, the one the automatic issuing compares their recorded time with
                .handler(() -> new BillingHandler(ledger, store, models, billingClock, tx))
                .clock(clock)
                .partitions(partitions)
                .build()
                .start();
    }

    /** Runs {@code command} on the loop thread; what it sends goes out like the loop's own records. */
    public <T> java.util.concurrent.CompletableFuture<T> submit(java.util.function.Function<Output, T> command) {
        return processor.submit(command);
    }

    public boolean isReady() {
        return processor.isReady();
    }

    /**
     * Whether this instance exports billing's cluster-wide series (month-to-date figures, budgets): the one the group
     * gave the first partition of {@code placement.allocation-events}.
     */
    @Override
    public boolean reportsCluster() {
        return processor.reportsCluster();
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
