package io.gantry.runtime.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Another tenant's job ids out of what a tenant is shown. The services' sentences name the jobs they are about
 * ("reclaims 8 x H100 for job 3f2a…", "held for starving job …"); a tenant sees its own jobs' ids and, in place
 * of another tenant's, {@value #OTHER}. Job ids are UUIDs (admission makes them so), as are other ids (nodes,
 * allocations): the caller says which of the UUIDs found are another tenant's jobs.
 */
public final class Redaction {
    /** What stands for another tenant's job id. */
    public static final String OTHER = "(another tenant's)";
    private static final Pattern JOB_ID =
            Pattern.compile("\\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\b");

    private Redaction() {
    }

    /** Every job id in the strings of {@code view} (strings, maps and lists, recursively). */
    public static Set<String> jobIds(Object view) {
        Set<String> ids = new LinkedHashSet<>();
        collect(view, ids);
        return ids;
    }

    private static void collect(Object view, Set<String> ids) {
        if (view instanceof String s) {
            Matcher m = JOB_ID.matcher(s);
            while (m.find()) {
                ids.add(m.group());
            }
        } else if (view instanceof Map<?, ?> map) {
            map.values().forEach(v -> collect(v, ids));
        } else if (view instanceof List<?> list) {
            list.forEach(v -> collect(v, ids));
        }
    }

    /**
     * {@code view} with every id that is {@code hidden} replaced by {@value #OTHER} in its strings; maps and lists
     * are copied (insertion order kept), other values kept as they are.
     */
    public static Object redact(Object view, Predicate<String> hidden) {
        if (view instanceof String s) {
            return text(s, hidden);
        }
        if (view instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put(k, redact(v, hidden)));
            return out;
        }
        if (view instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            list.forEach(v -> out.add(redact(v, hidden)));
            return out;
        }
        return view;
    }

    /** {@code text} with every id that is {@code hidden} replaced by {@value #OTHER}; null stays null. */
    public static String text(String text, Predicate<String> hidden) {
        if (text == null) {
            return null;
        }
        Matcher m = JOB_ID.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(hidden.test(m.group()) ? OTHER : m.group()));
        }
        m.appendTail(out);
        return out.toString();
    }
}
