package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pool's GPU tiers ({@code gantry.placement.tiers.<tier>}): tier name to its GPU models in order of preference;
 * and which models a task accepts.
 *
 * <p>A task's tier is never ignored. The queue pins a task that named no model to the model of the quota flavour it
 * reserved ({@code gpuModel}) and keeps the tier, so both may be set: the task then accepts the tier's models that
 * are also its own ({@code gpuModel}, else {@code gpuModels} in the task's order). A tier this pool does not know,
 * or an intersection that is empty, accepts nothing: the gang is deferred with {@link #whyNone}, never placed on the
 * flavour's model alone.
 */
public record GpuTiers(Map<String, List<String>> tiers) {
    public static final GpuTiers NONE = new GpuTiers(Map.of());

    public GpuTiers {
        Map<String, List<String>> copy = new TreeMap<>();
        tiers.forEach((tier, models) -> {
            if (models.isEmpty()) {
                throw new IllegalArgumentException("GPU tier " + tier + " needs at least one GPU model");
            }
            copy.put(tier, List.copyOf(models));
        });
        tiers = java.util.Collections.unmodifiableMap(copy);
    }

    /**
     * The models a task accepts, in order of preference: empty = any single model; null = none (an unknown tier,
     * or a tier that shares no model with the task's own models).
     */
    public List<String> accepted(TaskGroup t) {
        List<String> own = t.gpuModel() != null ? List.of(t.gpuModel()) : t.gpuModels();
        if (t.gpuTier() == null) {
            return own;
        }
        List<String> tier = tiers.get(t.gpuTier());
        if (tier == null) {
            return null;
        }
        if (own.isEmpty()) {
            return tier;
        }
        List<String> both = new ArrayList<>(own);
        both.retainAll(tier);
        return both.isEmpty() ? null : List.copyOf(both);
    }

    /** Why {@link #accepted} is null for the task (the deferral message). */
    public String whyNone(TaskGroup t) {
        List<String> tier = tiers.get(t.gpuTier());
        if (tier == null) {
            return "task " + t.name() + " asks for GPU tier " + t.gpuTier() + ", which is not configured (tiers: "
                    + (tiers.isEmpty() ? "none" : String.join(", ", tiers.keySet())) + ")";
        }
        List<String> own = t.gpuModel() != null ? List.of(t.gpuModel()) : t.gpuModels();
        return "task " + t.name() + " asks for GPU tier " + t.gpuTier() + " (" + String.join(", ", tier)
                + ") and GPU model " + String.join(" or ", own) + ", which the tier does not include";
    }
}
