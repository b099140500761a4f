package io.gantry.placement.core;

import io.gantry.model.GpuShares;

import java.util.Objects;

/**
 * Part of one GPU granted to a task: a fraction (compute share in thousandths plus GPU memory) or a MIG instance
 * (profile and first slot). The one unit quota, fair share and billing read: {@code milli / 1000} of a GPU.
 *
 * @param migSlice first slot of the MIG instance on the GPU's placement grid (0-7), null for a fraction
 */
public record GpuShare(int index, int milli, long memoryMiB, String migProfile, Integer migSlice) {
    public GpuShare {
        if (index < 0) {
            throw new IllegalArgumentException("gpu share index must be >= 0, was " + index);
        }
        if (milli < GpuShares.MIN_FRACTION || milli > GpuShares.WHOLE) {
            throw new IllegalArgumentException("gpu share milli must be 1..1000, was " + milli);
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("gpu share memoryMiB must be >= 0, was " + memoryMiB);
        }
        if ((migProfile == null) != (migSlice == null)) {
            throw new IllegalArgumentException("a MIG share needs both migProfile and migSlice");
        }
    }

    public static GpuShare fraction(int index, int milli, long memoryMiB) {
        return new GpuShare(index, milli, memoryMiB, null, null);
    }

    public boolean isMig() {
        return migProfile != null;
    }

    /** The slots of the GPU's MIG placement grid this share covers (0 for a fraction). */
    public int slotMask(MigProfile profile) {
        return isMig() ? profile.slots(Objects.requireNonNull(migSlice)) : 0;
    }
}
