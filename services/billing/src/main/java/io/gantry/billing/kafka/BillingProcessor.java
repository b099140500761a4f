package io.gantry.billing.kafka;

import io.gantry.billing.db.Ledger;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;

import java.time.Clock;

/**
 * Billing's event loop, at-least-once ({@code transactional(false)}): the ledger lives in PostgreSQL, not in
 * Kafka, so there is nothing to restore; idempotent inserts and stable event ids make redelivery harmless.
 */
@Context
public class BillingProcessor implements AutoCloseable {
    private final EventProcessor processor;

    public BillingProcessor(Ledger ledger,
                            @Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.kafka.partitions:1}") int partitions) {
        Clock clock = Clock.systemUTC();
        this.processor = EventProcessor.builder(Service.BILLING, bootstrap)
                .inputs(Topics.PLACEMENT_ALLOCATION_EVENTS)
                .transactional(false)
                .handler(() -> new BillingHandler(ledger, clock))
                .clock(clock)
                .partitions(partitions)
                .build()
                .start();
    }

    public boolean isReady() {
        return processor.isReady();
    }

    @PreDestroy
    @Override
    public void close() {
        processor.close();
    }
}
