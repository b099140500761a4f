package io.gantry.placement.core;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Which MIG profiles a GPU model offers: a configured GPU model name maps to one of the standard NVIDIA shapes
 * ({@code A100-40GB}, {@code A100-80GB}, {@code H100-80GB}). Without a mapping, a model whose name contains
 * {@code H100} gets {@code H100-80GB}, {@code A100} gets {@code A100-80GB} when the device has more than 40 GiB
 * and {@code A100-40GB} otherwise; any other model has no profiles. Only GPUs registered {@code migCapable} ever
 * host MIG instances.
 */
public final class MigProfiles {
    /**
     * The standard shapes from NVIDIA's MIG user guide: compute slices, placements (start slot, span) and the
     * memory the profile name states (nominal GB x 1024 MiB; the driver reports slightly less).
     */
    public static final Map<String, List<MigProfile>> SHAPES = Map.of(
            "A100-40GB", List.of(
                    new MigProfile("1g.5gb", 1, 5_120, 1, List.of(0, 1, 2, 3, 4, 5, 6)),
                    new MigProfile("1g.10gb", 1, 10_240, 2, List.of(0, 2, 4, 6)),
                    new MigProfile("2g.10gb", 2, 10_240, 2, List.of(0, 2, 4)),
                    new MigProfile("3g.20gb", 3, 20_480, 4, List.of(0, 4)),
                    new MigProfile("4g.20gb", 4, 20_480, 4, List.of(0)),
                    new MigProfile("7g.40gb", 7, 40_960, 8, List.of(0))),
            "A100-80GB", List.of(
                    new MigProfile("1g.10gb", 1, 10_240, 1, List.of(0, 1, 2, 3, 4, 5, 6)),
                    new MigProfile("1g.20gb", 1, 20_480, 2, List.of(0, 2, 4, 6)),
                    new MigProfile("2g.20gb", 2, 20_480, 2, List.of(0, 2, 4)),
                    new MigProfile("3g.40gb", 3, 40_960, 4, List.of(0, 4)),
                    new MigProfile("4g.40gb", 4, 40_960, 4, List.of(0)),
                    new MigProfile("7g.80gb", 7, 81_920, 8, List.of(0))),
            "H100-80GB", List.of(
                    new MigProfile("1g.10gb", 1, 10_240, 1, List.of(0, 1, 2, 3, 4, 5, 6)),
                    new MigProfile("1g.20gb", 1, 20_480, 2, List.of(0, 2, 4, 6)),
                    new MigProfile("2g.20gb", 2, 20_480, 2, List.of(0, 2, 4)),
                    new MigProfile("3g.40gb", 3, 40_960, 4, List.of(0, 4)),
                    new MigProfile("4g.40gb", 4, 40_960, 4, List.of(0)),
                    new MigProfile("7g.80gb", 7, 81_920, 8, List.of(0))));

    private static final MigProfiles STANDARD = new MigProfiles(Map.of());

    private final Map<String, String> shapeByModel;

    /**
     * @param shapeByModel GPU model name to a standard shape name; validated
     * @throws IllegalArgumentException naming the model whose shape is unknown
     */
    public MigProfiles(Map<String, String> shapeByModel) {
        Map<String, String> m = new TreeMap<>();
        shapeByModel.forEach((model, shape) -> {
            String s = Objects.requireNonNull(shape, "shape").trim();
            if (!SHAPES.containsKey(s)) {
                throw new IllegalArgumentException("GPU model " + model + ": unknown MIG shape `" + s + "` (known: "
                        + String.join(", ", new TreeMap<>(SHAPES).keySet()) + ")");
            }
            m.put(model, s);
        });
        this.shapeByModel = Map.copyOf(m);
    }

    public static MigProfiles standard() {
        return STANDARD;
    }

    /** The shape a GPU of this model and memory uses, or null when it has none. */
    public String shape(String model, long memoryMiB) {
        String configured = shapeByModel.get(model);
        if (configured != null) {
            return configured;
        }
        String upper = model.toUpperCase(Locale.ROOT);
        if (upper.contains("H100")) {
            return "H100-80GB";
        }
        if (upper.contains("A100")) {
            return memoryMiB > 40_960 + 1_024 ? "A100-80GB" : "A100-40GB";
        }
        return null;
    }

    /** The profile named {@code name} on a GPU, or null when the GPU cannot host it. */
    public MigProfile profile(Gpu gpu, String name) {
        if (!gpu.migCapable()) {
            return null;
        }
        String shape = shape(gpu.model(), gpu.memoryMiB());
        if (shape == null) {
            return null;
        }
        for (MigProfile p : SHAPES.get(shape)) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        return null;
    }

    /** The names of the profiles a GPU can host, in the shape's order; empty when it hosts none. */
    public List<String> offered(Gpu gpu) {
        String shape = gpu.migCapable() ? shape(gpu.model(), gpu.memoryMiB()) : null;
        return shape == null ? List.of() : SHAPES.get(shape).stream().map(MigProfile::name).toList();
    }

    /** Whether any standard shape has a profile of this name (for messages). */
    public static boolean known(String name) {
        return SHAPES.values().stream().flatMap(List::stream).anyMatch(p -> p.name().equals(name));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MigProfiles other && other.shapeByModel.equals(shapeByModel);
    }

    @Override
    public int hashCode() {
        return shapeByModel.hashCode();
    }
}
