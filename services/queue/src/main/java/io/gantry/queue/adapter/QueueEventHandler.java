package io.gantry.queue.adapter;

import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.queue.core.Input;
import io.gantry.queue.core.QueueCore;
import io.gantry.queue.core.QueueFact;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Feeds the core: restores it from {@code queue.job-events}, turns each input record into an {@link Input} and
 * publishes the facts {@link QueueCore#apply} returns (the core has already replayed them).
 */
final class QueueEventHandler implements EventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(QueueEventHandler.class);

    private final QueueCore core;
    private final Clock clock;
    private long restoredFacts;
    private final java.time.Duration parkedRecheck;
    private Instant nextParkedRecheck;

    QueueEventHandler(QueueCore core, Clock clock, java.time.Duration parkedRecheck) {
        this.core = core;
        this.clock = clock;
        this.parkedRecheck = parkedRecheck;
        this.nextParkedRecheck = clock.instant().plus(parkedRecheck);
    }

    QueueCore core() {
        return core;
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        if (topic.equals(Topics.QUEUE_JOB_EVENTS)) {
            QueueJobEvent e = (QueueJobEvent) value;
            core.replay(WireMapping.fromEnvelope(e), e.getOccurredAt());
            restoredFacts++;
        } else if (topic.equals(Topics.QUEUE_PREEMPTION_EVENTS)) {
            // facts name their attempt, so reading this topic before or after the lifecycle rebuilds the same state
            QueuePreemptionEvent e = (QueuePreemptionEvent) value;
            core.replay(WireMapping.fromPreemptionEnvelope(e), e.getOccurredAt());
            restoredFacts++;
        }
    }

    @Override
    public void restored(Output out) {
        LOG.info("queue state rebuilt from {} facts", restoredFacts);
        Instant now = clock.instant();
        publish(core.apply(new Input.Restored(), now), now, out);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        Input input = WireMapping.toInput(key, value);
        if (input != null) {
            Instant now = clock.instant();
            publish(core.apply(input, now), now, out);
        }
    }

    @Override
    public void tick(Instant wallNow, Output out) {
        Instant now = clock.instant();
        boolean recheck = !now.isBefore(nextParkedRecheck);
        if (recheck) {
            nextParkedRecheck = now.plus(parkedRecheck);
        }
        publish(core.apply(new Input.Tick(recheck), now), now, out);
    }

    /** occurredAt = the {@code now} the core decided at, so a replay accrues usage exactly as the live core did. */
    private void publish(List<QueueFact> facts, Instant now, Output out) {
        for (QueueFact fact : facts) {
            if (fact instanceof QueueFact.JobPreempted p) {
                out.send(Topics.QUEUE_PREEMPTION_EVENTS, p.jobId(),
                        WireMapping.toPreemptionEnvelope(p, UUID.randomUUID().toString(), now));
            } else {
                out.send(Topics.QUEUE_JOB_EVENTS, fact.jobId(),
                        WireMapping.toEnvelope(fact, UUID.randomUUID().toString(), now));
            }
        }
    }
}
