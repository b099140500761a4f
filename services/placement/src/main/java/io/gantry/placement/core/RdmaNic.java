package io.gantry.placement.core;

import java.util.Objects;

/**
 * An RDMA NIC of a node (InfiniBand or RoCE): where it hangs off (NUMA socket, PCIe switch numbered like
 * {@link Gpu#pcieSwitch()}, {@code -1} for none) so a task can be given the NIC its GPUs reach without crossing
 * the socket interconnect (GPUDirect RDMA).
 */
public record RdmaNic(String name, int numaNode, int pcieSwitch, int gbps) {
    /** Not behind any GPU's PCIe switch. */
    public static final int NO_SWITCH = -1;

    public RdmaNic {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("RDMA NIC name must not be blank");
        }
        if (numaNode < 0) {
            throw new IllegalArgumentException("RDMA NIC " + name + ": numaNode must be >= 0, was " + numaNode);
        }
        if (pcieSwitch < NO_SWITCH) {
            throw new IllegalArgumentException("RDMA NIC " + name + ": pcieSwitch must be >= -1, was " + pcieSwitch);
        }
        if (gbps < 0) {
            throw new IllegalArgumentException("RDMA NIC " + name + ": gbps must be >= 0, was " + gbps);
        }
    }
}
