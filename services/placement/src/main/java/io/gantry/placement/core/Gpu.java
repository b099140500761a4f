package io.gantry.placement.core;

import java.util.Objects;

/**
 * One GPU of a node, by its node-local index (what {@code CUDA_VISIBLE_DEVICES} names), with where it sits inside
 * the node: its NUMA socket, its PCIe switch (numbered within the node) and its NVLink domain ({@code -1}: no
 * NVLink). GPUs of one node with the same {@code nvlinkDomain} talk over NVLink/NVSwitch.
 */
public record Gpu(int index, String model, long memoryMiB, int numaNode, int pcieSwitch, int nvlinkDomain,
                  boolean migCapable) {
    /** No NVLink: the GPU only reaches its peers over PCIe. */
    public static final int NO_NVLINK = -1;

    public Gpu {
        Objects.requireNonNull(model, "model");
        if (index < 0) {
            throw new IllegalArgumentException("gpu index must be >= 0, was " + index);
        }
        if (model.isBlank()) {
            throw new IllegalArgumentException("gpu model must not be blank");
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("gpu " + index + ": memoryMiB must be >= 0, was " + memoryMiB);
        }
        if (numaNode < 0) {
            throw new IllegalArgumentException("gpu " + index + ": numaNode must be >= 0, was " + numaNode);
        }
        if (pcieSwitch < 0) {
            throw new IllegalArgumentException("gpu " + index + ": pcieSwitch must be >= 0, was " + pcieSwitch);
        }
        if (nvlinkDomain < NO_NVLINK) {
            throw new IllegalArgumentException("gpu " + index + ": nvlinkDomain must be >= -1, was " + nvlinkDomain);
        }
    }

    /** Not MIG-capable. */
    public Gpu(int index, String model, long memoryMiB, int numaNode, int pcieSwitch, int nvlinkDomain) {
        this(index, model, memoryMiB, numaNode, pcieSwitch, nvlinkDomain, false);
    }

    public Gpu withMigCapable(boolean capable) {
        return new Gpu(index, model, memoryMiB, numaNode, pcieSwitch, nvlinkDomain, capable);
    }

    /** A GPU on socket 0, PCIe switch 0, NVLink domain 0 (the wire defaults). */
    public Gpu(int index, String model, long memoryMiB) {
        this(index, model, memoryMiB, 0, 0, 0);
    }
}
