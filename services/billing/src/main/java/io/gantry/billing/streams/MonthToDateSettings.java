package io.gantry.billing.streams;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

import java.nio.file.Path;
import java.time.ZoneId;
import java.util.Objects;
import java.util.Properties;

/**
 * The {@code gantry.billing.streams.*} settings (made by {@link MonthToDateSettingsFactory}).
 *
 * @param replicationFactor of the changelog topics; -1 takes the broker's {@code default.replication.factor}
 *                          (1 on the embedded broker)
 * @param openMonths        months before the newest that still take late entries and recognise duplicates
 */
public record MonthToDateSettings(String bootstrap, int partitions, String applicationId, Path stateDir,
                                  int replicationFactor, int openMonths, ZoneId zone) {
    public MonthToDateSettings {
        Objects.requireNonNull(bootstrap, "bootstrap");
        Objects.requireNonNull(applicationId, "applicationId");
        Objects.requireNonNull(stateDir, "stateDir");
        Objects.requireNonNull(zone, "zone");
        if (openMonths < 0) {
            throw new IllegalArgumentException("gantry.billing.streams.open-months: must be >= 0");
        }
        if (replicationFactor == 0 || replicationFactor < -1) {
            throw new IllegalArgumentException("gantry.billing.streams.replication-factor: must be -1 or >= 1");
        }
    }

    public MonthToDateSettings withStateDir(Path dir) {
        return new MonthToDateSettings(bootstrap, partitions, applicationId, dir, replicationFactor, openMonths, zone);
    }

    Properties streamsProperties() {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, replicationFactor);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // a new application id counts billing's whole announced history, not only what comes after its start
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // Streams' consumer normally stays in the group after close, so a restarted instance waits out the session
        // timeout (45 s) before it gets the partitions; with in-memory stores there is nothing local to come back to,
        // so it leaves at once and the next instance (or a second billing) takes over without that wait
        p.put(StreamsConfig.mainConsumerPrefix("internal.leave.group.on.close"), true);
        // with several billing instances each keeps a standby copy of the stores it does not own, so any instance
        // answers the month-to-date view (from a copy at most a commit interval behind)
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        return p;
    }
}
