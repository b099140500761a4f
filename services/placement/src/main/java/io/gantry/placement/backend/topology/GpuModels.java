package io.gantry.placement.backend.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Short GPU model names, the way jobs and tiers name them ({@code H100}, {@code A100}, {@code L40S}), from what the
 * driver reports ({@code NVIDIA H100 80GB HBM3}, {@code NVIDIA A100-SXM4-80GB}) or what GPU feature discovery puts
 * on a Kubernetes node ({@code NVIDIA-H100-80GB-HBM3}). The memory size and form factor are dropped: the memory is
 * registered separately. The full product name stays on the node as the {@value #PRODUCT_LABEL} label.
 */
public final class GpuModels {
    /** The node label carrying the full product name the short name was taken from. */
    public static final String PRODUCT_LABEL = "gpu.product";
    private static final Set<String> VENDOR = Set.of("NVIDIA", "TESLA", "GEFORCE", "QUADRO");
    /** Families whose first word alone says nothing: keep the next word too ({@code RTX-A6000}). */
    private static final Set<String> FAMILY = Set.of("RTX", "GTX", "TITAN");

    private GpuModels() {
    }

    public static String shortName(String product) {
        if (product == null || product.isBlank()) {
            return "generic";
        }
        List<String> words = new ArrayList<>();
        for (String w : product.trim().split("[\\s\\-_]+")) {
            if (!w.isEmpty() && !VENDOR.contains(w.toUpperCase(Locale.ROOT))) {
                words.add(w);
            }
        }
        if (words.isEmpty()) {
            return product.trim();
        }
        String first = words.get(0);
        if (FAMILY.contains(first.toUpperCase(Locale.ROOT)) && words.size() > 1) {
            return first + "-" + words.get(1);
        }
        return first;
    }
}
