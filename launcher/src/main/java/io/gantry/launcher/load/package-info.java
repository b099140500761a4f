/**
 * The parts of {@code gantry loadtest} ({@link io.gantry.launcher.LoadTest}): the Kafka watcher that sees each job's
 * JobSubmitted, JobDispatched and AllocationGranted ({@link io.gantry.launcher.load.EventWatcher}), the join of
 * the HTTP and Kafka sides ({@link io.gantry.launcher.load.JobLedger}), the per-second lag and /proc samplers,
 * and the report. It measures; it asserts nothing about speed.
 */
package io.gantry.launcher.load;
