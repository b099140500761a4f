package io.gantry.launcher;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuShare;
import io.gantry.events.TaskPlacement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Replays {@code placement.allocation-events} in log order and reports every GPU held by two runs at once and
 * every run (job and attempt) or allocation granted twice. A device is held whole (one run) or in shares (fractions
 * or MIG instances, in thousandths): a whole grant needs the device free, a share needs no whole holder and room
 * left in the device's 1000 thousandths.
 */
final class AllocationAudit {
    private static final int WHOLE = 1000;

    /**
     * What the log shows: the grants and releases counted, the most devices held (whole or in part) at once, the
     * allocations never released, every violation found, as sentences, and the jobs they name (to show their history).
     */
    record Result(int grants, int releases, int mostGpusHeld, Set<String> stillHeld, List<String> violations,
                  Set<String> jobsInViolation) {
    }

    private AllocationAudit() {
    }

    static Result of(List<AllocationEvent> log) {
        // device -> allocation -> thousandths held (WHOLE for a whole device)
        Map<String, Map<String, Integer>> holders = new HashMap<>();
        Map<String, List<String>> devicesOfAllocation = new HashMap<>();
        Set<String> grantedRuns = new HashSet<>();
        Set<String> grantedAllocations = new HashSet<>();
        List<String> violations = new ArrayList<>();
        Set<String> jobsInViolation = new java.util.TreeSet<>();
        int grants = 0;
        int releases = 0;
        int most = 0;
        for (AllocationEvent e : log) {
            int before = violations.size();
            if (e.getPayload() instanceof AllocationGranted g) {
                grants++;
                String run = e.getJobId() + " attempt " + g.getAttempt();
                if (!grantedRuns.add(run)) {
                    violations.add("run " + run + " granted twice");
                }
                if (!grantedAllocations.add(g.getAllocationId())) {
                    violations.add("allocation " + g.getAllocationId() + " granted twice");
                }
                List<String> devices = new ArrayList<>();
                for (TaskPlacement p : g.getPlacements()) {
                    for (int index : p.getGpuIndices()) {
                        take(holders, p.getNodeId() + "/gpu" + index, g.getAllocationId(), WHOLE, true, run,
                                violations, devices);
                    }
                    for (GpuShare s : p.getGpuShares()) {
                        take(holders, p.getNodeId() + "/gpu" + s.getIndex(), g.getAllocationId(), s.getMilli(), false,
                                run, violations, devices);
                    }
                }
                devicesOfAllocation.put(g.getAllocationId(), devices);
                most = Math.max(most, holders.size());
            } else if (e.getPayload() instanceof AllocationReleased r) {
                releases++;
                List<String> devices = devicesOfAllocation.remove(r.getAllocationId());
                if (devices == null) {
                    violations.add("allocation " + r.getAllocationId() + " of job " + e.getJobId()
                            + " released but not held");
                } else {
                    for (String device : devices) {
                        Map<String, Integer> held = holders.get(device);
                        held.remove(r.getAllocationId());
                        if (held.isEmpty()) {
                            holders.remove(device);
                        }
                    }
                }
            }
            if (violations.size() > before) {
                jobsInViolation.add(e.getJobId());
            }
        }
        return new Result(grants, releases, most, Set.copyOf(devicesOfAllocation.keySet()), List.copyOf(violations),
                java.util.Collections.unmodifiableSet(jobsInViolation));
    }

    private static void take(Map<String, Map<String, Integer>> holders, String device, String allocation, int milli,
                             boolean whole, String run, List<String> violations, List<String> taken) {
        Map<String, Integer> held = holders.computeIfAbsent(device, d -> new LinkedHashMap<>());
        int inUse = held.values().stream().mapToInt(Integer::intValue).sum();
        boolean heldWhole = held.containsValue(WHOLE);
        if (held.containsKey(allocation)) {
            violations.add(device + " granted twice within " + allocation + " (" + run + ")");
        } else if (whole ? !held.isEmpty() : heldWhole || inUse + milli > WHOLE) {
            violations.add(device + " granted to " + allocation + " (" + run + (whole ? "" : ", " + milli
                    + " thousandths") + ") while " + describe(held) + " held it");
        } else {
            held.put(allocation, milli);
            taken.add(device);
            return;
        }
        if (held.isEmpty()) {
            holders.remove(device);
        }
    }

    private static String describe(Map<String, Integer> held) {
        List<String> parts = new ArrayList<>();
        held.forEach((a, m) -> parts.add(m == WHOLE ? a : a + " (" + m + " thousandths)"));
        return String.join(" and ", parts);
    }
}
