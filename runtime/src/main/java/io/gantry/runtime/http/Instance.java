package io.gantry.runtime.http;

import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.KafkaSecurity;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.exceptions.ConfigurationException;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import java.time.Duration;

/**
 * This process among the instances of its service: its id ({@code gantry.instance.id}: static group membership, so a
 * restarted instance takes its place back at once; unique per live instance, e.g. the pod name; empty: a dynamic
 * member), the URL the other instances reach its HTTP API at ({@code gantry.instance.advertised-url}; default
 * {@code http://127.0.0.1:<micronaut.server.port>}), and how long its consumer group waits for a silent member before
 * moving its work ({@code gantry.kafka.session-timeout}, 6 s to 5 min, default 10 s: the bound on a failover's wait),
 * and how long a batch of input may stay open before it commits ({@code gantry.kafka.commit-interval}, 0 to 1 s,
 * default 20 ms: fewer transactions under load for at most that much latency per hop; 0 commits every poll), how
 * long a transactional batch that has sent nothing may stay open ({@code gantry.kafka.quiet-commit-interval}, 0 to
 * 10 s, default 1 s: input that only changes the state, such as recovery noting grants and releases, commits once a
 * second instead of once per record; at least the commit interval), how long the broker may gather records for a
 * read model's fetch ({@code gantry.kafka.read-model-fetch-wait}, 0 to 1 s, default 100 ms: admission's jobs and
 * billing's ledger commit to PostgreSQL a few times a second instead of once per record), and
 * how many input records a service that keeps its state in Kafka handles between two snapshots of it
 * ({@code gantry.kafka.snapshot-every}, default 100,000; 0: none, every start replays the whole history), and how
 * long a start waits, without progress, for transactions open on its service's own topics before it fails and starts
 * over ({@code gantry.kafka.open-transaction-wait}, 0 to 10 min, default 60 s: past the producers' 30 s transaction
 * timeout, after which the broker aborts a dead producer's).
 */
@Singleton
public final class Instance {
    private static final java.util.regex.Pattern ID = java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private final String id;
    private final String advertisedUrl;
    private final Duration sessionTimeout;
    private final Duration commitInterval;
    private final Duration quietCommitInterval;
    private final Duration readModelFetchWait;
    private final long snapshotEvery;
    private final Duration openTransactionWait;
    private final KafkaSecurity kafkaSecurity;

    /** Without Kafka security settings (plain connections). */
    public Instance(String id, String advertisedUrl, int port, Duration sessionTimeout, Duration commitInterval,
                    Duration quietCommitInterval, Duration readModelFetchWait, long snapshotEvery,
                    Duration openTransactionWait) {
        this(id, advertisedUrl, port, sessionTimeout, commitInterval, quietCommitInterval, readModelFetchWait,
                snapshotEvery, openTransactionWait, KafkaSecurity.NONE);
    }

    @Inject
    public Instance(@Value("${gantry.instance.id:}") String id,
                    @Value("${gantry.instance.advertised-url:}") String advertisedUrl,
                    @Value("${micronaut.server.port:8080}") int port,
                    @Value("${gantry.kafka.session-timeout:10s}") Duration sessionTimeout,
                    @Value("${gantry.kafka.commit-interval:20ms}") Duration commitInterval,
                    @Value("${gantry.kafka.quiet-commit-interval:1s}") Duration quietCommitInterval,
                    @Value("${gantry.kafka.read-model-fetch-wait:100ms}") Duration readModelFetchWait,
                    @Value("${gantry.kafka.snapshot-every:100000}") long snapshotEvery,
                    @Value("${gantry.kafka.open-transaction-wait:60s}") Duration openTransactionWait,
                    KafkaSecurity kafkaSecurity) {
        if (!id.isEmpty() && !ID.matcher(id).matches()) {
            throw new ConfigurationException("gantry.instance.id must be 1-64 letters, digits, '.', '_' or '-', was `"
                    + id + "`");
        }
        if (sessionTimeout.compareTo(Duration.ofSeconds(6)) < 0 || sessionTimeout.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new ConfigurationException("gantry.kafka.session-timeout must be from 6s (the broker's minimum) to 5m,"
                    + " was " + sessionTimeout);
        }
        if (commitInterval.isNegative() || commitInterval.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new ConfigurationException("gantry.kafka.commit-interval must be from 0 to 1s, was " + commitInterval);
        }
        if (quietCommitInterval.isNegative() || quietCommitInterval.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new ConfigurationException("gantry.kafka.quiet-commit-interval must be from 0 to 10s, was "
                    + quietCommitInterval);
        }
        if (readModelFetchWait.isNegative() || readModelFetchWait.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new ConfigurationException("gantry.kafka.read-model-fetch-wait must be from 0 to 1s, was "
                    + readModelFetchWait);
        }
        if (snapshotEvery < 0) {
            throw new ConfigurationException("gantry.kafka.snapshot-every must be >= 0 records (0: no snapshots), was "
                    + snapshotEvery);
        }
        if (openTransactionWait.isNegative() || openTransactionWait.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new ConfigurationException("gantry.kafka.open-transaction-wait must be from 0 to 10m, was "
                    + openTransactionWait);
        }
        if (!advertisedUrl.isEmpty() && !advertisedUrl.matches("https?://[^/\\s]+")) {
            throw new ConfigurationException("gantry.instance.advertised-url must be http(s)://host[:port] without a "
                    + "path, was `" + advertisedUrl + "`");
        }
        this.id = id;
        this.advertisedUrl = !advertisedUrl.isEmpty() ? advertisedUrl : port > 0 ? "http://127.0.0.1:" + port : "";
        this.sessionTimeout = sessionTimeout;
        this.commitInterval = commitInterval;
        this.quietCommitInterval = quietCommitInterval;
        this.readModelFetchWait = readModelFetchWait;
        this.snapshotEvery = snapshotEvery;
        this.openTransactionWait = openTransactionWait;
        this.kafkaSecurity = kafkaSecurity;
    }

    /**
     * The builder with this instance's id, address, session timeout, commit intervals, snapshot interval,
     * open-transaction wait and Kafka security settings.
     */
    public EventProcessor.Builder configure(EventProcessor.Builder b) {
        return b.instanceId(id).advertisedUrl(advertisedUrl).sessionTimeout(sessionTimeout)
                .commitInterval(commitInterval).quietCommitInterval(quietCommitInterval)
                .readModelFetchWait(readModelFetchWait).snapshotEvery(snapshotEvery)
                .openTransactionWait(openTransactionWait).security(kafkaSecurity);
    }

    /** How this service's Kafka clients authenticate and encrypt ({@code kafka.security.protocol}, sasl, ssl). */
    public KafkaSecurity kafkaSecurity() {
        return kafkaSecurity;
    }

    public String id() {
        return id;
    }

    public String advertisedUrl() {
        return advertisedUrl;
    }
}
