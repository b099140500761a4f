/**
 * JMH benchmarks of the services' pure cores, over {@code @Param} grids. Speed is measured here, never asserted
 * in tests. Run with {@code bench/run}; record results in {@code bench/RESULTS-<core>.md}.
 */
package io.gantry.bench;
