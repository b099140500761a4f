package io.gantry.launcher;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.TaskPlacement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Replays {@code placement.allocation-events} in log order and reports every GPU held by two runs at once and
 * every run (job and attempt) or allocation granted twice. Whole GPUs only (what the tests' jobs ask for).
 */
final class AllocationAudit {
    /** What the log shows: the grants and releases counted, and every violation found, as sentences. */
    record Result(int grants, int releases, int mostGpusHeld, Set<String> stillHeld, List<String> violations) {
    }

    private AllocationAudit() {
    }

    static Result of(List<AllocationEvent> log) {
        Map<String, String> holderOfGpu = new HashMap<>();
        Map<String, List<String>> gpusOfAllocation = new HashMap<>();
        Set<String> grantedRuns = new HashSet<>();
        Set<String> grantedAllocations = new HashSet<>();
        List<String> violations = new ArrayList<>();
        int grants = 0;
        int releases = 0;
        int most = 0;
        for (AllocationEvent e : log) {
            if (e.getPayload() instanceof AllocationGranted g) {
                grants++;
                String run = e.getJobId() + " attempt " + g.getAttempt();
                if (!grantedRuns.add(run)) {
                    violations.add("run " + run + " granted twice");
                }
                if (!grantedAllocations.add(g.getAllocationId())) {
                    violations.add("allocation " + g.getAllocationId() + " granted twice");
                }
                List<String> gpus = new ArrayList<>();
                for (TaskPlacement p : g.getPlacements()) {
                    for (int index : p.getGpuIndices()) {
                        String gpu = p.getNodeId() + "/gpu" + index;
                        String holder = holderOfGpu.putIfAbsent(gpu, g.getAllocationId());
                        if (holder != null) {
                            violations.add(gpu + " granted to " + g.getAllocationId() + " (" + run + ") while "
                                    + holder + " held it");
                        } else {
                            gpus.add(gpu);
                        }
                    }
                }
                gpusOfAllocation.put(g.getAllocationId(), gpus);
                most = Math.max(most, holderOfGpu.size());
            } else if (e.getPayload() instanceof AllocationReleased r) {
                releases++;
                List<String> gpus = gpusOfAllocation.remove(r.getAllocationId());
                if (gpus == null) {
                    violations.add("allocation " + r.getAllocationId() + " of job " + e.getJobId()
                            + " released but not held");
                } else {
                    gpus.forEach(holderOfGpu::remove);
                }
            }
        }
        return new Result(grants, releases, most, Set.copyOf(gpusOfAllocation.keySet()), List.copyOf(violations));
    }
}
