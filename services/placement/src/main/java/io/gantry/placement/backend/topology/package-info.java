/**
 * A GPU server's topology from what the NVIDIA driver and Linux report ({@code nvidia-smi -q}, {@code nvidia-smi topo
 * -m}, sysfs NUMA nodes): GPU models, memory and MIG mode, NVLink domains, PCIe switches, NUMA sockets and RDMA NICs,
 * as the GPUs and NICs placement registers. The parsers are pure string functions shared by the local backend (which
 * runs the commands, {@link io.gantry.placement.backend.topology.HostTopology}) and the Kubernetes backend (which
 * reads the same text from a node annotation).
 */
package io.gantry.placement.backend.topology;
