package io.gantry.billing.streams;

import io.gantry.billing.money.BillingSettings;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Property;
import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import jakarta.inject.Singleton;

import java.nio.file.Path;

/** Reads {@code gantry.billing.streams.*}; the state directory defaults to {@code <gantry.billing.data-dir>/streams}. */
@Factory
public class MonthToDateSettingsFactory {
    @Singleton
    MonthToDateSettings settings(BillingSettings billing,
                                 @Value("${kafka.bootstrap.servers}") String bootstrap,
                                 @Value("${gantry.kafka.partitions:1}") int partitions,
                                 @Value("${gantry.billing.streams.application-id:gantry-billing-month-to-date}")
                                 String applicationId,
                                 @Nullable @Property(name = "gantry.billing.streams.state-dir") String stateDir,
                                 @Nullable @Property(name = "gantry.billing.data-dir") String dataDir,
                                 @Value("${gantry.billing.streams.replication-factor:-1}") int replicationFactor,
                                 @Value("${gantry.billing.streams.open-months:2}") int openMonths) {
        Path data = dataDir == null || dataDir.isBlank()
                ? Path.of(System.getProperty("java.io.tmpdir"), "gantry-billing") : Path.of(dataDir);
        Path state = stateDir == null || stateDir.isBlank() ? data.resolve("streams") : Path.of(stateDir);
        return new MonthToDateSettings(bootstrap, partitions, applicationId, state, replicationFactor, openMonths,
                billing.zone());
    }
}
