package io.gantry.queue.core;

/**
 * Request shape: pending jobs of one queue with the same GPU amount and flavour candidates fit or not together, so the
 * {@link AdmissionCycle} looks at the head of each shape instead of at every job.
 *
 * @param candidates a number standing for the job's list of candidate flavours ({@link PendingIndex})
 */
record RequestShape(long gpuMilli, int candidates) implements Comparable<RequestShape> {
    @Override
    public int compareTo(RequestShape o) {
        int c = Long.compare(gpuMilli, o.gpuMilli);
        return c != 0 ? c : Integer.compare(candidates, o.candidates);
    }
}
