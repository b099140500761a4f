package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fluent test fixture that writes the YAML document tree and parses it with {@link FairShareConfig#fromYaml}, so
 * every scenario also goes through validation: {@code aConfig().flavours("H100").cohort("research")
 * .queue(aQueue("vision").cohort("research").quota("H100", 16))}.
 */
final class ConfigBuilder {
    private final Map<String, Object> root = new LinkedHashMap<>();
    private final List<Object> cohorts = new ArrayList<>();
    private final List<Object> queues = new ArrayList<>();

    static ConfigBuilder aConfig() {
        return new ConfigBuilder().halfLife("0").starvationWait("1h");
    }

    static QueueBuilder aQueue(String name) {
        return new QueueBuilder(name);
    }

    ConfigBuilder flavours(String... f) {
        root.put("flavours", List.of(f));
        return this;
    }

    ConfigBuilder cohort(String name) {
        cohorts.add(Map.of("name", name));
        return this;
    }

    ConfigBuilder cohort(String name, String parent) {
        cohorts.add(Map.of("name", name, "parent", parent));
        return this;
    }

    /** A cohort entry with any fields, e.g. {@code Map.of("name", "research", "ordering", "fifo")}. */
    ConfigBuilder cohort(Map<String, Object> entry) {
        cohorts.add(entry);
        return this;
    }

    ConfigBuilder queue(QueueBuilder q) {
        queues.add(q.map);
        return this;
    }

    ConfigBuilder halfLife(String d) {
        root.put("halfLife", d);
        return this;
    }

    ConfigBuilder starvationWait(String d) {
        root.put("starvationWait", d);
        return this;
    }

    /** Priority classes as name, value pairs; the first is the default. */
    ConfigBuilder classes(Object... nameValue) {
        Map<String, Object> classes = new LinkedHashMap<>();
        for (int i = 0; i < nameValue.length; i += 2) {
            classes.put((String) nameValue[i], nameValue[i + 1]);
        }
        root.put("priorityClasses", Map.of("default", nameValue[0], "classes", classes));
        return this;
    }

    ConfigBuilder set(String key, Object value) {
        root.put(key, value);
        return this;
    }

    Map<String, Object> document() {
        Map<String, Object> doc = new LinkedHashMap<>(root);
        if (!cohorts.isEmpty()) {
            doc.put("cohorts", cohorts);
        }
        doc.put("queues", queues);
        return doc;
    }

    FairShareConfig build() {
        return FairShareConfig.fromYaml(document());
    }

    static final class QueueBuilder {
        final Map<String, Object> map = new LinkedHashMap<>();
        private final Map<String, Object> quotas = new LinkedHashMap<>();

        QueueBuilder(String name) {
            map.put("name", name);
            map.put("tenant", name);
            map.put("quotas", quotas);
        }

        QueueBuilder tenant(String t) {
            map.put("tenant", t);
            return this;
        }

        QueueBuilder cohort(String c) {
            map.put("cohort", c);
            return this;
        }

        QueueBuilder weight(double w) {
            map.put("weight", w);
            return this;
        }

        QueueBuilder quota(String resource, long nominal) {
            quotas.put(resource, new LinkedHashMap<>(Map.of("nominal", nominal)));
            return this;
        }

        /** A GPU quota with a fraction, as people write it ({@code 2.5}). */
        QueueBuilder quota(String resource, double nominalGpus) {
            quotas.put(resource, new LinkedHashMap<>(Map.of("nominal", nominalGpus)));
            return this;
        }

        /** {@code null} limits are left out (unlimited). */
        QueueBuilder quota(String resource, long nominal, Long borrowingLimit, Long lendingLimit) {
            Map<String, Object> q = new LinkedHashMap<>(Map.of("nominal", nominal));
            if (borrowingLimit != null) {
                q.put("borrowingLimit", borrowingLimit);
            }
            if (lendingLimit != null) {
                q.put("lendingLimit", lendingLimit);
            }
            quotas.put(resource, q);
            return this;
        }

        QueueBuilder set(String key, Object value) {
            map.put(key, value);
            return this;
        }
    }
}
