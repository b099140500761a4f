package io.gantry.queue.core;

import java.util.List;

/**
 * One queue at a glance, as {@code GET /v1/queues} shows it.
 *
 * @param pending       queued jobs of this queue (parked ones included)
 * @param weightedShare the queue's dominant share of its cohort tree (current allocation plus decayed usage) divided
 *                      by its weight: lower goes first
 * @param fairShare     the queue's weight divided by the sum of the weights in its cohort tree: the share it is
 *                      entitled to under contention
 */
public record QueueView(String name, String tenant, String cohort, List<FlavourView> flavours, int pending,
                        int parked, int dispatched, double weightedShare, double fairShare) {
    public QueueView {
        flavours = List.copyOf(flavours);
    }

    /**
     * One resource of one queue (GPU flavours in thousandths of a GPU). {@code borrowed}: usage above nominal; {@code lent}: the part of this queue's idle
     * nominal that others are using (the cohort's borrowing attributed pro rata to the idle nominal of its lenders).
     * Limits are null when unlimited.
     */
    public record FlavourView(String flavour, long nominal, long used, long borrowed, long lent, Long borrowingLimit,
                              Long lendingLimit) {
    }

    /** Thousandths of a GPU of every GPU flavour: nominal. */
    public long nominalMilli() {
        return flavours.stream().filter(f -> !f.flavour().equals(FairShareConfig.CPU)
                && !f.flavour().equals(FairShareConfig.MEMORY)).mapToLong(FlavourView::nominal).sum();
    }

    /** Thousandths of a GPU of every GPU flavour: reserved by dispatched jobs. */
    public long usedMilli() {
        return flavours.stream().filter(f -> !f.flavour().equals(FairShareConfig.CPU)
                && !f.flavour().equals(FairShareConfig.MEMORY)).mapToLong(FlavourView::used).sum();
    }
}
