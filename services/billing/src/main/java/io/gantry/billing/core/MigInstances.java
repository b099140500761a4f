package io.gantry.billing.core;

import io.gantry.model.GpuShares;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * MIG instances held, by profile ({@code 1g.10gb -> 2}): what a per-profile price applies to. Kept sorted, so equal
 * holdings are equal values and encode to the same text ({@code 1g.10gb=2;3g.40gb=1}, the ledger column).
 */
public final class MigInstances {
    private MigInstances() {
    }

    /** A validated, unmodifiable, sorted copy ({@code null} = none). */
    public static SortedMap<String, Integer> of(Map<String, Integer> instances) {
        if (instances == null || instances.isEmpty()) {
            return Collections.emptySortedMap();
        }
        TreeMap<String, Integer> copy = new TreeMap<>();
        instances.forEach((profile, n) -> {
            if (!GpuShares.isMigProfile(profile)) {
                throw new IllegalArgumentException("migInstances: unknown MIG profile " + profile);
            }
            if (n == null || n < 1) {
                throw new IllegalArgumentException("migInstances: " + profile + " must count >= 1 instance, was " + n);
            }
            copy.put(profile, n);
        });
        return Collections.unmodifiableSortedMap(copy);
    }

    /** Both holdings added up. */
    public static SortedMap<String, Integer> plus(Map<String, Integer> a, Map<String, Integer> b) {
        TreeMap<String, Integer> sum = new TreeMap<>(a);
        b.forEach((profile, n) -> sum.merge(profile, n, Math::addExact));
        return of(sum);
    }

    /** What the instances hold in thousandths of a GPU, by the shared rule. */
    public static long milli(Map<String, Integer> instances) {
        long sum = 0;
        for (Map.Entry<String, Integer> e : instances.entrySet()) {
            sum = Math.addExact(sum, (long) GpuShares.migMilli(e.getKey()) * e.getValue());
        }
        return sum;
    }

    /** {@code 1g.10gb=2;3g.40gb=1}; empty text for none. */
    public static String encode(Map<String, Integer> instances) {
        StringBuilder s = new StringBuilder();
        instances.forEach((profile, n) -> s.append(s.length() == 0 ? "" : ";").append(profile).append('=').append(n));
        return s.toString();
    }

    /** The inverse of {@link #encode}; {@code null} or empty text is none. */
    public static SortedMap<String, Integer> decode(String text) {
        if (text == null || text.isEmpty()) {
            return Collections.emptySortedMap();
        }
        TreeMap<String, Integer> out = new TreeMap<>();
        for (String part : text.split(";")) {
            int eq = part.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("migInstances: malformed " + text);
            }
            out.put(part.substring(0, eq), Integer.parseInt(part.substring(eq + 1)));
        }
        return of(out);
    }
}
