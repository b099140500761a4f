package io.gantry.simulator;

import java.util.List;
import java.util.Map;

/**
 * Jobs sorted by submit time, plus each tenant's entitlement weight (the relative size of its guaranteed quota;
 * the simulator scales the weights to the cluster it replays on).
 */
public record Workload(String name, List<SimJob> jobs, Map<String, Double> tenantWeights, String note) {
    public Workload {
        jobs = List.copyOf(jobs);
        tenantWeights = Map.copyOf(tenantWeights);
    }
}
