package io.gantry.placement.core;

import java.util.Objects;

/**
 * How devices are shared: {@code overcommit} (>= 1.0) multiplies what fractions may sum to per device (1000
 * thousandths and the device's memory at 1.0 = never oversubscribed); MIG instances are never overcommitted.
 */
public record GpuSharing(double overcommit, MigProfiles mig) {
    public static final GpuSharing DEFAULT = new GpuSharing(1.0, MigProfiles.standard());

    public GpuSharing {
        Objects.requireNonNull(mig, "mig");
        if (!(overcommit >= 1.0) || Double.isInfinite(overcommit)) {
            throw new IllegalArgumentException("GPU overcommit must be a finite factor >= 1.0, was " + overcommit);
        }
    }

    /** The thousandths fractions may sum to on one device. */
    public int milliCapacity() {
        return (int) Math.floor(1000 * overcommit);
    }

    /** The memory fractions may sum to on a device of {@code memoryMiB}. */
    public long memoryCapacity(long memoryMiB) {
        return (long) Math.floor(memoryMiB * overcommit);
    }
}
