package io.gantry.admission.kafka;

import io.gantry.runtime.kafka.TransientFailureException;

/**
 * PostgreSQL could not take an event. This is the database's fault, not the record's, so the record must not
 * go to the dead-letter topic: the EventProcessor restarts its loop and redelivers from the last committed offset.
 */
class ReadModelUnavailableException extends TransientFailureException {
    ReadModelUnavailableException(Throwable cause) {
        super("read model unavailable: " + cause, cause);
    }
}
