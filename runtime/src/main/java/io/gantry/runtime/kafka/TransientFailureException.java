package io.gantry.runtime.kafka;

/**
 * Thrown by a handler when the record is fine but the service cannot process it right now (its database is down,
 * say). The {@link EventProcessor} does not dead-letter the record: it restarts from the last committed offset
 * and tries again, with backoff.
 */
public class TransientFailureException extends RuntimeException {
    public TransientFailureException(String message, Throwable cause) {
        super(message, cause);
    }
}
