package io.gantry.placement.core;

import io.gantry.model.GpuShares;

import java.util.List;
import java.util.Objects;

/**
 * One MIG profile of a GPU model, as NVIDIA defines it: {@code computeSlices} of the GPU's 7, {@code memoryMiB},
 * and where an instance may start on the GPU's placement grid of 8 slots ({@code starts}), covering {@code span}
 * slots from there (e.g. A100 {@code 3g.20gb}: 3 slices, starts 0 or 4, span 4).
 */
public record MigProfile(String name, int computeSlices, long memoryMiB, int span, List<Integer> starts) {
    public static final int COMPUTE_SLICES = GpuShares.MIG_COMPUTE_SLICES;
    public static final int SLOTS = 8;

    public MigProfile {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("MIG profile name must not be blank");
        }
        if (computeSlices < 1 || computeSlices > COMPUTE_SLICES) {
            throw new IllegalArgumentException("MIG profile " + name + ": compute slices must be 1..7, was " + computeSlices);
        }
        if (memoryMiB <= 0) {
            throw new IllegalArgumentException("MIG profile " + name + ": memoryMiB must be > 0");
        }
        if (span < 1 || span > SLOTS) {
            throw new IllegalArgumentException("MIG profile " + name + ": span must be 1..8, was " + span);
        }
        starts = List.copyOf(starts);
        if (starts.isEmpty()) {
            throw new IllegalArgumentException("MIG profile " + name + ": needs at least one start slot");
        }
        for (int s : starts) {
            if (s < 0 || s + span > SLOTS) {
                throw new IllegalArgumentException("MIG profile " + name + ": start " + s + " with span " + span
                        + " leaves the 8 slots");
            }
        }
    }

    /** The GPU share this profile is worth, in thousandths: compute slices over the GPU's 7, rounded down. */
    public int milli() {
        return GpuShares.migMilli(computeSlices);
    }

    /** The slot mask of an instance starting at {@code start}. */
    public int slots(int start) {
        return ((1 << span) - 1) << start;
    }
}
