package io.gantry.queue.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Usage history decays with the half-life and changes the order: a tenant that just had the cluster for an hour
 * yields to one that had nothing, even when it asks first; without a history (half-life 0) the earlier job goes
 * first; and under decay two long-ago hours weigh less than one recent hour, where without decay they weigh more.
 */
class DecayedUsageTest {
    /** Queues a and b with 4 GPUs each and c with none, in one cohort of 8 H100s. */
    private static QueueDriver pool(String halfLife) {
        return QueueDriver.with(aConfig().flavours("H100").halfLife(halfLife).cohort("pool")
                .queue(aQueue("a").cohort("pool").quota("H100", 4))
                .queue(aQueue("b").cohort("pool").quota("H100", 4))
                .queue(aQueue("c").cohort("pool").quota("H100", 0)).build());
    }

    @ParameterizedTest(name = "half-life {0}, busy hour ended {1} s before: {2} goes first")
    @CsvSource({
            "1h,  0,      b",   // a's hour of 8 GPUs still weighs: b, with nothing, goes first
            "0,   0,      a",   // only current allocation counts: equal, so the earlier submission
            "1h,  86400,  b",   // a day later a's hour has decayed by 2^-24, still more than b's nothing
    })
    void aTenantsRecentUsageSendsItBehindAnIdleOne(String halfLife, long gapSeconds, String first) {
        QueueDriver q = pool(halfLife);
        // a borrows b's idle half and holds all 8 GPUs for an hour
        q.at(0).submit(aJob("busy").tenant("a").gpus(8).submittedAt(0));
        q.at(1).granted("busy", 1);
        q.at(3_600).finished("busy");
        // then c (no quota of its own) borrows the whole cluster until `gap` later; meanwhile a and b both ask for
        // all of it, a first; when c is done only one of them can run
        q.at(3_600).submit(aJob("filler").tenant("c").gpus(8).submittedAt(3_600));
        q.at(3_601).granted("filler", 1);
        q.at(3_602).submit(aJob("a2").tenant("a").gpus(8).submittedAt(3_602));
        q.at(3_603).submit(aJob("b2").tenant("b").gpus(8).submittedAt(3_603));
        q.at(3_610 + gapSeconds).finished("filler");

        List<String> order = q.dispatchOrder();
        assertThat(order).containsExactly("busy", "filler", first + "2"); // the other waits for the winner
    }

    @ParameterizedTest(name = "half-life {0}: {1} goes first")
    @CsvSource({
            "1h,      a",   // a's two hours were a day ago: decayed to nothing next to b's hour just now
            "10000d,  b",   // (almost) no decay: a's two hours weigh twice b's one
    })
    void twoHoursLongAgoWeighLessThanOneHourJustNowUnderDecay(String halfLife, String first) {
        QueueDriver q = pool(halfLife);
        q.at(0).submit(aJob("a1").tenant("a").gpus(8).submittedAt(0));
        q.at(1).granted("a1", 1);
        q.at(7_201).finished("a1");
        long t = 7_201 + 86_400;
        q.at(t).submit(aJob("b1").tenant("b").gpus(8).submittedAt(t));
        q.at(t + 1).granted("b1", 1);
        q.at(t + 3_601).finished("b1");
        // c holds the cluster briefly while a and b both ask for all of it, a first
        q.at(t + 3_601).submit(aJob("filler").tenant("c").gpus(8).submittedAt(t + 3_601));
        q.at(t + 3_602).granted("filler", 1);
        q.at(t + 3_603).submit(aJob("a2").tenant("a").gpus(8).submittedAt(t + 3_603));
        q.at(t + 3_604).submit(aJob("b2").tenant("b").gpus(8).submittedAt(t + 3_604));
        q.at(t + 3_610).finished("filler");

        assertThat(q.dispatchOrder()).containsExactly("a1", "b1", "filler", first + "2");
    }
}
