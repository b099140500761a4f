package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the budgets document ({@code {"budgets": [{tenant, queue?, limit, action?, warnAt?}]}}) and checks it
 * against what is already spent: a new budget, or a lowered limit, below this month's spend is refused, since it
 * could only ever be "exhausted" and would hide the mistake. A budget kept as it is in force, or raised, is accepted
 * whatever the spend: running work may take a budget past its limit (it is never stopped), and the document replaces
 * every budget, so checking those too would let one exhausted budget block every later change of the others.
 */
public final class BudgetParser {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");
    public static final List<Integer> DEFAULT_WARN_AT = List.of(50, 80);

    private BudgetParser() {
    }

    /** {@link #parse(Object, List, java.util.function.Function, int)} with no budget in force. */
    public static List<Budget> parse(Object tree, java.util.function.Function<Budget, BigDecimal> spent,
                                     int minorDigits) {
        return parse(tree, List.of(), spent, minorDigits);
    }

    /**
     * @param inForce the budgets the document replaces: one whose limit is not lowered is not held to the spend
     * @param spent   this month's spend of a budget's tenant (and queue) so far, asked only of the budgets held to it
     */
    public static List<Budget> parse(Object tree, List<Budget> inForce,
                                     java.util.function.Function<Budget, BigDecimal> spent, int minorDigits) {
        Map<String, BigDecimal> limitsInForce = new HashMap<>();
        for (Budget b : inForce) {
            limitsInForce.put(b.key(), b.limit());
        }
        List<InvalidInput.Field> errors = new ArrayList<>();
        if (!(tree instanceof Map<?, ?> root) || !(root.get("budgets") instanceof List<?> list)) {
            throw InvalidInput.of("budgets", "is required: a list of {tenant, queue?, limit, action?, warnAt?}");
        }
        for (Object k : root.keySet()) {
            if (!"budgets".equals(k)) {
                errors.add(new InvalidInput.Field(String.valueOf(k), "is not a known field (expected budgets)"));
            }
        }
        List<Budget> out = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String path = "budgets[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                errors.add(new InvalidInput.Field(path, "must be an object"));
                continue;
            }
            for (Object k : m.keySet()) {
                if (!Set.of("tenant", "queue", "limit", "action", "warnAt").contains(String.valueOf(k))) {
                    errors.add(new InvalidInput.Field(path + "." + k, "is not a known field (expected one of "
                            + "action, limit, queue, tenant, warnAt)"));
                }
            }
            String tenant = name(path + ".tenant", m.get("tenant"), true, errors);
            String queue = name(path + ".queue", m.get("queue"), false, errors);
            BigDecimal limit = limit(path + ".limit", m.get("limit"), minorDigits, errors);
            Budget.Action action = Budget.Action.WARN;
            if (m.get("action") != null) {
                try {
                    action = Budget.Action.valueOf(String.valueOf(m.get("action")).toUpperCase(java.util.Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    errors.add(new InvalidInput.Field(path + ".action", "must be WARN, HOLD or REJECT"));
                }
            }
            List<Integer> warnAt = warnAt(path + ".warnAt", m.get("warnAt"), errors);
            if (tenant == null || limit == null || warnAt == null) {
                continue;
            }
            Budget b = new Budget(tenant, queue, limit, action, warnAt);
            Integer earlier = seen.putIfAbsent(b.key(), i);
            if (earlier != null) {
                errors.add(new InvalidInput.Field(path + (queue == null ? ".tenant" : ".queue"), "repeats budgets["
                        + earlier + "] (one budget per tenant, and per tenant and queue)"));
                continue;
            }
            BigDecimal before = limitsInForce.get(b.key());
            if (before != null && limit.compareTo(before) >= 0) {
                out.add(b);
                continue;
            }
            BigDecimal already = spent.apply(b);
            if (limit.compareTo(already) < 0) {
                errors.add(new InvalidInput.Field(path + ".limit", "is below what " + b.key()
                        + " has already spent this month (" + already.toPlainString() + ")"));
                continue;
            }
            out.add(b);
        }
        if (!errors.isEmpty()) {
            throw new InvalidInput(errors);
        }
        return out;
    }

    private static String name(String path, Object v, boolean required, List<InvalidInput.Field> errors) {
        if (v == null) {
            if (required) {
                errors.add(new InvalidInput.Field(path, "is required"));
            }
            return null;
        }
        if (!(v instanceof String s) || !NAME.matcher(s).matches()) {
            errors.add(new InvalidInput.Field(path, "must be 1..64 letters, digits or ._:-"));
            return null;
        }
        return s;
    }

    private static BigDecimal limit(String path, Object v, int minorDigits, List<InvalidInput.Field> errors) {
        BigDecimal d = null;
        if (v instanceof String s) {
            try {
                // trim() would also drop control characters (a NUL, a bell) and accept what the client did not mean
                d = s.chars().anyMatch(Character::isISOControl) ? null : new BigDecimal(s.strip());
            } catch (NumberFormatException e) {
                d = null;
            }
        } else if (v instanceof BigDecimal b) {
            d = b;
        } else if (v instanceof Integer || v instanceof Long || v instanceof java.math.BigInteger) {
            d = new BigDecimal(v.toString());
        }
        if (d == null) {
            errors.add(new InvalidInput.Field(path, "is required: a decimal amount such as \"500.00\""));
            return null;
        }
        if (d.signum() < 0) {
            errors.add(new InvalidInput.Field(path, "must not be negative, was " + d.toPlainString()));
            return null;
        }
        if (Money.canonical(d).scale() > minorDigits || d.compareTo(new BigDecimal("1000000000000")) > 0) {
            errors.add(new InvalidInput.Field(path, "must have at most " + minorDigits
                    + " decimals and be at most 1000000000000"));
            return null;
        }
        return d;
    }

    private static List<Integer> warnAt(String path, Object v, List<InvalidInput.Field> errors) {
        if (v == null) {
            return DEFAULT_WARN_AT;
        }
        if (!(v instanceof List<?> l) || l.size() > 10) {
            errors.add(new InvalidInput.Field(path, "must be a list of at most 10 percentages"));
            return null;
        }
        List<Integer> out = new ArrayList<>();
        int previous = 0;
        for (Object o : l) {
            if (!(o instanceof Integer p) || p <= previous || p >= 100) {
                errors.add(new InvalidInput.Field(path, "must be ascending whole percentages between 1 and 99"));
                return null;
            }
            out.add(p);
            previous = p;
        }
        return out;
    }
}
