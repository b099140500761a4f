package io.gantry.placement.backend;

import io.gantry.placement.core.PlacedTask;

import java.util.List;
import java.util.Map;

/**
 * When a gang's run is over, from what is known of its tasks' ends; the one rule every backend applies (a pure
 * function: the backend tracks the ends, this decides).
 *
 * <ul>
 *   <li>A task that ended unsuccessfully (non-zero exit, killed, lost) fails the run, whatever the policy.</li>
 *   <li>Without a leader: the run succeeds once every task exited 0.</li>
 *   <li>With a leader (JobSet's success policy, e.g. an MPI launcher): the run succeeds once every replica of the
 *       leader group exited 0; the backend then stops the other tasks, which may run forever (MPI workers, parameter
 *       servers). A leader that names no task of the gang counts as none.</li>
 * </ul>
 */
public final class SuccessRule {
    private SuccessRule() {
    }

    public enum Verdict {
        /** Nothing decided yet. */
        RUNNING,
        /** The run succeeded; tasks still running are to be stopped. */
        SUCCEEDED,
        /** A task ended unsuccessfully; the others are to be stopped. */
        FAILED
    }

    /** One replica of a task group. */
    public record Replica(String task, int replica) {
        public static Replica of(PlacedTask p) {
            return new Replica(p.task(), p.replica());
        }
    }

    /**
     * @param gang   every task of the run
     * @param leader the task group deciding success, or null for every task
     * @param ended  the replicas that ended so far: true when they exited 0
     */
    public static Verdict judge(List<PlacedTask> gang, String leader, Map<Replica, Boolean> ended) {
        if (ended.containsValue(Boolean.FALSE)) {
            return Verdict.FAILED;
        }
        List<PlacedTask> deciding = deciding(gang, leader);
        boolean allDone = !deciding.isEmpty()
                && deciding.stream().allMatch(p -> Boolean.TRUE.equals(ended.get(Replica.of(p))));
        return allDone ? Verdict.SUCCEEDED : Verdict.RUNNING;
    }

    /** The tasks whose successful end makes the run a success: the leader group's, or all. */
    public static List<PlacedTask> deciding(List<PlacedTask> gang, String leader) {
        if (leader != null) {
            List<PlacedTask> leaders = gang.stream().filter(p -> p.task().equals(leader)).toList();
            if (!leaders.isEmpty()) {
                return leaders;
            }
        }
        return gang;
    }
}
