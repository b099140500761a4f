package io.gantry.billing.core;

import io.gantry.model.GpuShares;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a price book from its document tree (JSON or YAML parsed into maps, lists, strings and exact numbers) and
 * writes it back. Every bad field is reported at once, by path ({@code gpu[1].perGpuHour}).
 *
 * <pre>
 * currency: EUR
 * gpu:
 *   - {model: H100, perGpuHour: "2.50", effectiveFrom: 2026-01-01T00:00:00Z}
 *   - {model: H100, tier: premium, perGpuHour: "3.10", effectiveFrom: 2026-01-01T00:00:00Z}
 * cpu:    [{perCoreHour: "0.02", effectiveFrom: 2026-01-01T00:00:00Z}]
 * memory: [{perGiBHour: "0.005", effectiveFrom: 2026-01-01T00:00:00Z}]
 * multipliers:
 *   - {priorityClass: preemptible, factor: "0.6", effectiveFrom: 2026-01-01T00:00:00Z}
 *   - {queue: research, factor: "0.9", effectiveFrom: 2026-01-01T00:00:00Z}
 * mig:                                  # optional: a MIG profile priced per instance-hour, not by its share
 *   - {model: A100, profile: 1g.10gb, perInstanceHour: "0.45", effectiveFrom: 2026-01-01T00:00:00Z}
 * </pre>
 */
public final class PriceBookParser {
    /** Prices above this per unit-hour are a typo, not a price; it also keeps every product far from overflow. */
    public static final BigDecimal MAX_PRICE = new BigDecimal("1000000");
    public static final BigDecimal MAX_FACTOR = new BigDecimal("100");
    public static final int PRICE_DECIMALS = 6;
    public static final int FACTOR_DECIMALS = 4;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");
    private static final Instant EARLIEST = UsageWindow.EARLIEST;
    private static final Instant LATEST = UsageWindow.LATEST;

    private PriceBookParser() {
    }

    /**
     * The book the tree describes (version 0; the store numbers it).
     *
     * @param knownModels GPU models nodes have registered; empty when none is known yet (then models are not judged)
     */
    public static PriceBook parse(Object tree, Set<String> knownModels) {
        List<InvalidInput.Field> errors = new ArrayList<>();
        if (!(tree instanceof Map<?, ?> root)) {
            throw InvalidInput.of("body", "must be an object with currency, gpu, cpu, memory, multipliers, mig");
        }
        unknownKeys("", root, Set.of("currency", "gpu", "cpu", "memory", "multipliers", "mig"), errors);
        String currency = currency(root.get("currency"), errors);
        List<PriceBook.GpuPrice> gpu = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        List<?> gpuList = list("gpu", root.get("gpu"), errors);
        for (int i = 0; i < gpuList.size(); i++) {
            String path = "gpu[" + i + "]";
            Map<?, ?> m = object(path, gpuList.get(i), errors);
            if (m == null) {
                continue;
            }
            unknownKeys(path + ".", m, Set.of("model", "tier", "perGpuHour", "effectiveFrom"), errors);
            String model = model(path, m.get("model"), knownModels, errors);
            String tier = name(path + ".tier", m.get("tier"), false, errors);
            BigDecimal price = decimal(path + ".perGpuHour", m.get("perGpuHour"), PRICE_DECIMALS, MAX_PRICE, errors);
            Instant from = instant(path + ".effectiveFrom", m.get("effectiveFrom"), errors);
            if (model != null && price != null && from != null) {
                overlap(seen, "gpu", model + "|" + tier + "|" + from, i, path, errors);
                gpu.add(new PriceBook.GpuPrice(model, tier, price, from));
            }
        }
        List<PriceBook.ResourcePrice> cpu = resources("cpu", "perCoreHour", root.get("cpu"), errors);
        List<PriceBook.ResourcePrice> memory = resources("memory", "perGiBHour", root.get("memory"), errors);
        List<PriceBook.Multiplier> multipliers = new ArrayList<>();
        List<?> mList = list("multipliers", root.get("multipliers"), errors);
        seen.clear();
        for (int i = 0; i < mList.size(); i++) {
            String path = "multipliers[" + i + "]";
            Map<?, ?> m = object(path, mList.get(i), errors);
            if (m == null) {
                continue;
            }
            unknownKeys(path + ".", m, Set.of("queue", "priorityClass", "factor", "effectiveFrom"), errors);
            String queue = name(path + ".queue", m.get("queue"), false, errors);
            String cls = name(path + ".priorityClass", m.get("priorityClass"), false, errors);
            if (m.get("queue") == null && m.get("priorityClass") == null) {
                errors.add(new InvalidInput.Field(path + ".queue", "name a queue or a priorityClass"));
            } else if (m.get("queue") != null && m.get("priorityClass") != null) {
                errors.add(new InvalidInput.Field(path + ".priorityClass", "name a queue or a priorityClass, not both"));
            }
            BigDecimal factor = decimal(path + ".factor", m.get("factor"), FACTOR_DECIMALS, MAX_FACTOR, errors);
            Instant from = instant(path + ".effectiveFrom", m.get("effectiveFrom"), errors);
            if ((queue == null) != (cls == null) && factor != null && from != null) {
                overlap(seen, "multipliers", (queue != null ? "q|" + queue : "c|" + cls) + "|" + from, i, path, errors);
                multipliers.add(new PriceBook.Multiplier(queue, cls, factor, from));
            }
        }
        List<PriceBook.MigPrice> mig = new ArrayList<>();
        List<?> migList = list("mig", root.get("mig"), errors);
        seen.clear();
        for (int i = 0; i < migList.size(); i++) {
            String path = "mig[" + i + "]";
            Map<?, ?> m = object(path, migList.get(i), errors);
            if (m == null) {
                continue;
            }
            unknownKeys(path + ".", m, Set.of("model", "profile", "perInstanceHour", "effectiveFrom"), errors);
            String model = model(path, m.get("model"), knownModels, errors);
            String profile = name(path + ".profile", m.get("profile"), true, errors);
            if (profile != null && !GpuShares.isMigProfile(profile)) {
                errors.add(new InvalidInput.Field(path + ".profile", "unknown MIG profile " + profile
                        + ": must be named <slices>g.<memory>gb with 1-7 slices, e.g. 1g.10gb"));
                profile = null;
            }
            BigDecimal price = decimal(path + ".perInstanceHour", m.get("perInstanceHour"), PRICE_DECIMALS, MAX_PRICE,
                    errors);
            Instant from = instant(path + ".effectiveFrom", m.get("effectiveFrom"), errors);
            if (model != null && profile != null && price != null && from != null) {
                overlap(seen, "mig", model + "|" + profile + "|" + from, i, path, errors);
                mig.add(new PriceBook.MigPrice(model, profile, price, from));
            }
        }
        if (!errors.isEmpty()) {
            throw new InvalidInput(errors);
        }
        return new PriceBook(0, currency, gpu, cpu, memory, multipliers, mig);
    }

    /** A GPU model name at {@code path}.model, refused when nodes are known and none has it. */
    private static String model(String path, Object v, Set<String> knownModels, List<InvalidInput.Field> errors) {
        String model = name(path + ".model", v, true, errors);
        if (model != null && !knownModels.isEmpty() && !knownModels.contains(model)) {
            errors.add(new InvalidInput.Field(path + ".model", "unknown GPU model " + model
                    + " (registered: " + String.join(", ", new java.util.TreeSet<>(knownModels)) + ")"));
        }
        return model;
    }

    /** The document of a book, in the shape {@link #parse} reads (amounts as exact decimal strings). */
    public static Map<String, Object> toTree(PriceBook book) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("currency", book.currency());
        root.put("gpu", book.gpu().stream().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", p.model());
            if (p.tier() != null) {
                m.put("tier", p.tier());
            }
            m.put("perGpuHour", Money.text(p.perGpuHour(), book.minorDigits()));
            m.put("effectiveFrom", p.effectiveFrom().toString());
            return m;
        }).toList());
        root.put("cpu", book.cpu().stream().map(p -> resource("perCoreHour", p, book.minorDigits())).toList());
        root.put("memory", book.memory().stream().map(p -> resource("perGiBHour", p, book.minorDigits())).toList());
        root.put("multipliers", book.multipliers().stream().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            if (p.queue() != null) {
                m.put("queue", p.queue());
            } else {
                m.put("priorityClass", p.priorityClass());
            }
            m.put("factor", p.factor().toPlainString());
            m.put("effectiveFrom", p.effectiveFrom().toString());
            return m;
        }).toList());
        if (!book.mig().isEmpty()) {
            root.put("mig", book.mig().stream().map(p -> {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("model", p.model());
                m.put("profile", p.profile());
                m.put("perInstanceHour", Money.text(p.perInstanceHour(), book.minorDigits()));
                m.put("effectiveFrom", p.effectiveFrom().toString());
                return m;
            }).toList());
        }
        return root;
    }

    private static Map<String, Object> resource(String key, PriceBook.ResourcePrice p, int minorDigits) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(key, Money.text(p.perHour(), minorDigits));
        m.put("effectiveFrom", p.effectiveFrom().toString());
        return m;
    }

    private static List<PriceBook.ResourcePrice> resources(String field, String priceKey, Object value,
                                                           List<InvalidInput.Field> errors) {
        List<PriceBook.ResourcePrice> out = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        List<?> l = list(field, value, errors);
        for (int i = 0; i < l.size(); i++) {
            String path = field + "[" + i + "]";
            Map<?, ?> m = object(path, l.get(i), errors);
            if (m == null) {
                continue;
            }
            unknownKeys(path + ".", m, Set.of(priceKey, "effectiveFrom"), errors);
            BigDecimal price = decimal(path + "." + priceKey, m.get(priceKey), PRICE_DECIMALS, MAX_PRICE, errors);
            Instant from = instant(path + ".effectiveFrom", m.get("effectiveFrom"), errors);
            if (price != null && from != null) {
                overlap(seen, field, from.toString(), i, path, errors);
                out.add(new PriceBook.ResourcePrice(price, from));
            }
        }
        return out;
    }

    private static void overlap(Map<String, Integer> seen, String field, String key, int i, String path,
                                List<InvalidInput.Field> errors) {
        Integer earlier = seen.putIfAbsent(key, i);
        if (earlier != null) {
            errors.add(new InvalidInput.Field(path + ".effectiveFrom", "overlaps " + field + "[" + earlier
                    + "]: two prices for the same thing from the same instant"));
        }
    }

    private static String currency(Object v, List<InvalidInput.Field> errors) {
        if (!(v instanceof String s) || s.isBlank()) {
            errors.add(new InvalidInput.Field("currency", "is required: an ISO 4217 code such as EUR"));
            return "XXX";
        }
        try {
            java.util.Currency c = java.util.Currency.getInstance(s);
            if (c.getDefaultFractionDigits() < 0) {
                errors.add(new InvalidInput.Field("currency", s + " has no minor unit; use a real currency"));
            }
            return c.getCurrencyCode();
        } catch (IllegalArgumentException e) {
            errors.add(new InvalidInput.Field("currency", "is not an ISO 4217 code: " + s));
            return "XXX";
        }
    }

    private static List<?> list(String field, Object v, List<InvalidInput.Field> errors) {
        if (v == null) {
            return List.of();
        }
        if (v instanceof List<?> l) {
            if (l.size() > 10_000) {
                errors.add(new InvalidInput.Field(field, "has more than 10000 entries"));
                return List.of();
            }
            return l;
        }
        errors.add(new InvalidInput.Field(field, "must be a list"));
        return List.of();
    }

    private static Map<?, ?> object(String path, Object v, List<InvalidInput.Field> errors) {
        if (v instanceof Map<?, ?> m) {
            return m;
        }
        errors.add(new InvalidInput.Field(path, "must be an object"));
        return null;
    }

    private static void unknownKeys(String prefix, Map<?, ?> m, Set<String> allowed, List<InvalidInput.Field> errors) {
        for (Object k : m.keySet()) {
            if (!allowed.contains(String.valueOf(k))) {
                errors.add(new InvalidInput.Field(prefix + k, "is not a known field (expected one of "
                        + String.join(", ", new java.util.TreeSet<>(allowed)) + ")"));
            }
        }
    }

    private static String name(String path, Object v, boolean required, List<InvalidInput.Field> errors) {
        if (v == null) {
            if (required) {
                errors.add(new InvalidInput.Field(path, "is required"));
            }
            return null;
        }
        if (!(v instanceof String s) || !NAME.matcher(s).matches()) {
            errors.add(new InvalidInput.Field(path, "must be 1..64 letters, digits or ._:- (starting with a letter "
                    + "or digit)"));
            return null;
        }
        return s;
    }

    private static BigDecimal decimal(String path, Object v, int maxDecimals, BigDecimal max,
                                      List<InvalidInput.Field> errors) {
        BigDecimal d;
        if (v == null) {
            errors.add(new InvalidInput.Field(path, "is required"));
            return null;
        } else if (v instanceof String s) {
            try {
                if (s.chars().anyMatch(Character::isISOControl)) {
                    // trim() would drop them and accept what the client did not mean
                    throw new NumberFormatException("control character");
                }
                d = new BigDecimal(s.strip());
            } catch (NumberFormatException e) {
                errors.add(new InvalidInput.Field(path, "is not a decimal number: " + s));
                return null;
            }
        } else if (v instanceof BigDecimal b) {
            d = b;
        } else if (v instanceof Integer || v instanceof Long || v instanceof BigInteger) {
            d = new BigDecimal(v.toString());
        } else {
            // a binary floating-point number may already have lost the price the author wrote
            errors.add(new InvalidInput.Field(path, "must be a decimal string such as \"2.50\" or an exact number"));
            return null;
        }
        if (d.signum() < 0) {
            errors.add(new InvalidInput.Field(path, "must not be negative, was " + d.toPlainString()));
            return null;
        }
        if (d.compareTo(max) > 0) {
            errors.add(new InvalidInput.Field(path, "must be at most " + max.toPlainString()));
            return null;
        }
        if (Money.canonical(d).scale() > maxDecimals) {
            errors.add(new InvalidInput.Field(path, "has more than " + maxDecimals + " decimals"));
            return null;
        }
        return Money.canonical(d);
    }

    private static Instant instant(String path, Object v, List<InvalidInput.Field> errors) {
        if (!(v instanceof String s)) {
            errors.add(new InvalidInput.Field(path, v == null ? "is required: an ISO-8601 instant"
                    : "must be an ISO-8601 instant string such as 2026-01-01T00:00:00Z"));
            return null;
        }
        try {
            Instant t = Instant.parse(s.trim());
            if (t.isBefore(EARLIEST) || t.isAfter(LATEST)) {
                errors.add(new InvalidInput.Field(path, "must be between " + EARLIEST + " and " + LATEST));
                return null;
            }
            if (t.getNano() % 1_000_000 != 0) {
                errors.add(new InvalidInput.Field(path, "must have at most millisecond precision"));
                return null;
            }
            return t;
        } catch (DateTimeParseException e) {
            errors.add(new InvalidInput.Field(path, "must be an ISO-8601 instant such as 2026-01-01T00:00:00Z"));
            return null;
        }
    }
}
