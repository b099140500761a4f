package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One restored record handed to a handler, the record's own fault kept from stopping the start. A record a handler
 * refuses while it runs goes to the dead letter and the loop goes on; the same record is still on its topic, and a
 * topic a service restores from may be one of its inputs too: refusing it again at every start would stop the
 * service for good (the loop would rebuild its state, meet it again, forever; and so would every instance that took
 * the work over). So a restore that refuses a record (an exception, or a stack overflow: the record nested deeper
 * than the handler recurses) skips it with one warning. What is not the record's fault still stops the start, to be
 * tried again: a {@link TransientFailureException} (a database away), an {@link Error} other than a stack overflow.
 */
public final class Restores {
    private static final Logger LOG = LoggerFactory.getLogger(Restores.class);

    private Restores() {
    }

    /** Restores one record into {@code h}; false when the handler refused it and it was skipped. */
    public static boolean restore(EventHandler h, Topic<?> topic, String key, Object value, String service,
                                  String where) {
        try {
            h.restore(topic, key, value);
            return true;
        } catch (TransientFailureException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("{}: skipping a record of {} (key {}, {}) its handler refused while restoring (as input it went "
                    + "to the dead letter): {}", service, topic.name(), key, where, e.toString());
            return false;
        } catch (StackOverflowError e) {
            LOG.warn("{}: skipping a record of {} (key {}, {}) nested too deep to restore", service, topic.name(), key,
                    where);
            return false;
        }
    }
}
