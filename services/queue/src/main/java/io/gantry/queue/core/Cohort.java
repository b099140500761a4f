package io.gantry.queue.core;

/**
 * A cohort of the {@link QuotaTree}: no quota of its own; it pools what its queues and child cohorts lend and keeps
 * what they borrow from it. Cohorts nest; the root names the tree.
 */
final class Cohort {
    final String name;
    Cohort parent;
    /** The name of its cohort tree ({@code cohort:<root>}). */
    String tree;
    /** Per resource: the lendable nominal of every queue below it (a cohort without limits passes it all up). */
    final long[] subtree;
    /** Per resource: what the queues below it use above their guaranteed (non-lendable) quota. */
    final long[] usage;

    Cohort(String name, int resources) {
        this.name = name;
        this.subtree = new long[resources];
        this.usage = new long[resources];
    }

    /** The root of its tree (itself without a parent). */
    Cohort root() {
        Cohort c = this;
        while (c.parent != null) {
            c = c.parent;
        }
        return c;
    }
}
