package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.NodeSpec;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Runs the tasks of granted allocations. Every method is called on the event loop thread; outcomes that happen
 * elsewhere (a process exits) are queued and handed over by {@link #poll}, so the core only ever sees them on
 * the loop thread.
 */
public interface ExecutionBackend extends AutoCloseable {

    /** {@code simulated} or {@code local}; written into every allocation and node it owns. */
    String name();

    /** The nodes this backend provides; registered at every start. */
    List<NodeSpec> nodes();

    /** Whether the node should heartbeat now (a failed simulated node stays silent). */
    boolean heartbeating(String nodeId);

    /**
     * Starts every task of the allocation.
     *
     * @return empty when all tasks started; otherwise the failure to report (nothing is left running)
     */
    Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now);

    /**
     * Asks the tasks to stop gracefully (a preemption: SIGTERM, so they can checkpoint); they may still exit on
     * their own and be reported by {@link #poll}. The core's deadline ends the grace period with {@link #stop}.
     * Default: nothing to ask (simulated tasks run until their end or the deadline). Idempotent.
     */
    default void terminate(String allocationId) {
    }

    /**
     * Tells the run's tasks they are about to be stopped, just before {@link #terminate}, where they can read it
     * without the network (the API answers them too). Default: nowhere to put it. Must not block or throw.
     */
    default void notice(String allocationId, PreemptionNotice notice) {
    }

    /** Stops whatever still runs of the allocation; no outcome is reported for it afterwards. Idempotent. */
    void stop(String allocationId);

    /** Outcomes that became known up to {@code now}. */
    List<RunOutcome> poll(Instant now);

    /**
     * When {@link #poll} will next have an outcome, if the backend knows: {@link Instant#MAX} when no run will end
     * by itself, null when it cannot tell (real processes end when they end, so they are polled every tick). The
     * simulated backend knows, so a replay in virtual time jumps from one run end to the next.
     */
    default Instant nextOutcomeAt() {
        return null;
    }

    /**
     * After state was rebuilt: {@code live} are the allocations still held. The backend keeps or re-creates what
     * it can, stops anything else it runs, and returns the outcomes to report at once (e.g. lost processes).
     */
    List<RunOutcome> adopt(List<LiveRun> live, Instant now);

    /**
     * Device faults observed since the last call, at most {@code perNode} per node (the rest wait for the next call),
     * so one flooding node cannot starve the others. Default: none (a backend that cannot see devices).
     */
    default List<DeviceFault> pollFaults(Instant now, int perNode) {
        return List.of();
    }

    /**
     * When {@link #pollFaults} will next have something, if the backend knows (null: it cannot tell, or nothing is
     * known to be coming). The virtual-time driver ticks placement then.
     */
    default Instant nextFaultAt() {
        return null;
    }

    /**
     * How busy each GPU is now, by node and GPU index, in percent (0-100), where the backend can tell; empty when it
     * cannot (then no utilisation facts are written). A sample describes the time since the previous one.
     */
    default java.util.Map<String, java.util.Map<Integer, Integer>> gpuUtilisation(Instant now) {
        return java.util.Map.of();
    }

    /**
     * The pre-flight check of a node, run before a gang starts on it: empty when it passed, else why it failed (the
     * node is then cordoned and the gang placed again elsewhere). Default: every node passes.
     */
    default Optional<String> preflight(NodeSpec node, Instant now) {
        return Optional.empty();
    }

    /**
     * GPUs of this backend's nodes held by workloads Gantry did not start, by node id (a node absent: none), as last
     * seen; empty while the backend has not looked yet, so placement keeps what it recorded before (a restart does
     * not forget them). Placement takes them off the free count. Default: the backend cannot see other workloads.
     */
    default Optional<java.util.Map<String, ForeignLoad>> foreignLoad() {
        return Optional.empty();
    }

    /**
     * The task output this backend keeps of a job's run ({@code attempt} null: its newest run here): who owns it and
     * which task replicas wrote any. Empty when the backend keeps none (the simulated one runs no processes) or has
     * none of that job. Called on an HTTP thread, not the event loop: must only read what is safe to read.
     */
    default Optional<RunLogs> logs(String jobId, Integer attempt) {
        return Optional.empty();
    }

    /**
     * Up to {@code maxBytes} of one task replica's output from byte {@code offset}, ending on a whole UTF-8
     * character; empty when there is no such log. Same thread rule as {@link #logs}.
     */
    default Optional<LogChunk> readLog(String jobId, int attempt, String task, int replica, long offset,
                                       int maxBytes) {
        return Optional.empty();
    }

    /** A run's logs: its tenant (null: unknown, so only an admin reads them), attempt, and the replicas with a log. */
    record RunLogs(String tenant, int attempt, List<LogName> logs) {
    }

    /** One task replica's log and its size in bytes now. */
    record LogName(String task, int replica, long size) {
    }

    /** A piece of a log: the bytes from {@code offset} to {@code nextOffset} as text, and the log's size now. */
    record LogChunk(long offset, long nextOffset, long size, String text) {
    }

    /**
     * The chunk of {@code bytes} (read from {@code offset}) cut back to a whole UTF-8 character, so the next read
     * starts on one: at most three bytes of a character split by the read are left for it.
     */
    static LogChunk chunk(byte[] bytes, int length, long offset, long size) {
        int end = length;
        // step back over continuation bytes (10xxxxxx) to the start of the last character, then keep it only if whole
        int start = end;
        while (start > 0 && end - start < 4 && (bytes[start - 1] & 0xC0) == 0x80) {
            start--;
        }
        if (start > 0 && end > 0 && start <= end) {
            int lead = bytes[start - 1] & 0xFF;
            int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (need > 1 && end - (start - 1) < need) {
                end = start - 1;
            }
        }
        return new LogChunk(offset, offset + end,
                size, new String(bytes, 0, end, java.nio.charset.StandardCharsets.UTF_8));
    }

    @Override
    default void close() {
    }

    /**
     * The first step of {@link #adopt}: the live allocations by id (in the order given), after {@code stop} was called
     * for every run the backend still has ({@code running}) that is not live any more.
     */
    static java.util.Map<String, Allocation> liveById(List<LiveRun> live, java.util.Collection<String> running,
                                                      java.util.function.Consumer<String> stop) {
        java.util.Map<String, Allocation> byId = new java.util.LinkedHashMap<>();
        live.forEach(l -> byId.put(l.allocation().allocationId(), l.allocation()));
        for (String id : List.copyOf(running)) {
            if (!byId.containsKey(id)) {
                stop.accept(id);
            }
        }
        return byId;
    }

    /** A live allocation and its run plan (null when the plan could not be recovered). */
    record LiveRun(Allocation allocation, RunPlan plan) {
    }
}
