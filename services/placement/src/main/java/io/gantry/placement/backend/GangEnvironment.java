package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The gang's rendezvous in every task's environment, alike on every backend (what torchrun, torch.distributed and
 * MPI launchers read): {@code MASTER_ADDR} / {@code MASTER_PORT} (rank 0's host and the run's port), {@code
 * WORLD_SIZE} (tasks in the gang), {@code RANK} (this task, {@link GangRanks}), {@code GANTRY_RANK} / {@code
 * GANTRY_WORLD_SIZE} (the same under Gantry's names), {@code GANTRY_HOSTS} (every rank's host in rank order, for a
 * hostfile) and torchrun's {@code PET_NNODES}, {@code PET_NODE_RANK}, {@code PET_MASTER_ADDR}, {@code
 * PET_MASTER_PORT}, {@code PET_NPROC_PER_NODE} (one torchrun "node" per task, a process per GPU).
 *
 * <p>And how a tenant's own variables join Gantry's: the tenant's come first and Gantry's win, except {@code PATH}
 * and {@code HOME}, which a tenant may set (a virtual environment, a home directory).
 */
public final class GangEnvironment {
    /** Gantry sets these too, but only as a default for the tenant's own. */
    public static final Set<String> TENANT_MAY_SET = Set.of("PATH", "HOME");
    /** Where the ports of backends without a configured one start (torch.distributed's customary 29500). */
    public static final int PORT_BASE = 29500;
    /** How many ports above {@link #PORT_BASE} a run's port may be (below Linux' ephemeral range at 32768). */
    public static final int PORT_SPAN = 2000;

    private GangEnvironment() {
    }

    /**
     * The rendezvous variables of {@code task}.
     *
     * @param hosts the host of every rank, in rank order ({@link GangRanks#inRankOrder})
     */
    public static Map<String, String> rendezvous(Allocation allocation, PlacedTask task, List<String> hosts,
                                                 int masterPort) {
        int rank = GangRanks.rank(allocation, task);
        String master = hosts.get(0);
        String port = Integer.toString(masterPort);
        String world = Integer.toString(hosts.size());
        Map<String, String> e = new LinkedHashMap<>();
        e.put("MASTER_ADDR", master);
        e.put("MASTER_PORT", port);
        e.put("WORLD_SIZE", world);
        e.put("RANK", Integer.toString(rank));
        e.put("GANTRY_WORLD_SIZE", world);
        e.put("GANTRY_RANK", Integer.toString(rank));
        e.put("GANTRY_HOSTS", String.join(",", hosts));
        e.put("PET_NNODES", world);
        e.put("PET_NODE_RANK", Integer.toString(rank));
        e.put("PET_MASTER_ADDR", master);
        e.put("PET_MASTER_PORT", port);
        e.put("PET_NPROC_PER_NODE", Integer.toString(Math.max(1, task.gpuIndices().size())));
        return e;
    }

    /** Every rank's host, rank order, where each task runs on its node (the node id is the host name). */
    public static List<String> nodeHosts(Allocation allocation) {
        return GangRanks.inRankOrder(allocation).stream().map(PlacedTask::nodeId).toList();
    }

    /**
     * A port for the run's rendezvous where none is configured: derived from the allocation id, so a restarted
     * placement (and every task of the gang) computes the same one, and two runs rarely share it.
     */
    public static int derivedPort(String allocationId) {
        return PORT_BASE + Math.floorMod(allocationId.hashCode(), PORT_SPAN);
    }

    /**
     * The task's whole environment: the tenant's variables, then Gantry's on top (they win), except that the
     * tenant's {@link #TENANT_MAY_SET} replace Gantry's defaults.
     */
    public static Map<String, String> merge(Map<String, String> tenant, Map<String, String> gantry) {
        Map<String, String> env = new LinkedHashMap<>(tenant);
        gantry.forEach((k, v) -> {
            if (!(TENANT_MAY_SET.contains(k) && tenant.containsKey(k))) {
                env.put(k, v);
            }
        });
        return env;
    }
}
