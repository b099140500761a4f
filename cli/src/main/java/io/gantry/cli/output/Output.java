package io.gantry.cli.output;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * How a command shows what the API answered: a table for people ({@code table}, {@code wide} with more columns), or
 * the API's own JSON, as JSON or YAML, for scripts. JSON and YAML are the API's answer unchanged.
 */
public final class Output {
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public enum Format {
        TABLE, WIDE, JSON, YAML;

        public static Format parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("must be table, wide, json or yaml, not " + s);
            }
        }

        public boolean machine() {
            return this == JSON || this == YAML;
        }
    }

    private final Format format;
    private final PrintWriter out;

    public Output(Format format, PrintWriter out) {
        this.format = format;
        this.out = out;
    }

    public Format format() {
        return format;
    }

    public boolean wide() {
        return format == Format.WIDE;
    }

    public PrintWriter out() {
        return out;
    }

    /** The API's answer as JSON or YAML, or the table the command draws from it. */
    public void show(JsonNode answer, Supplier<String> table) {
        switch (format) {
            case JSON -> out.println(json(answer));
            case YAML -> out.print(yaml(answer));
            default -> out.print(table.get());
        }
        out.flush();
    }

    public static String json(JsonNode node) {
        try {
            return PRETTY.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Compact JSON on one line: one object per line when a command reports changes as they happen. */
    public static String jsonLine(JsonNode node) {
        return node.toString();
    }

    public static String yaml(JsonNode node) {
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setIndicatorIndent(2);
        o.setIndentWithIndicator(true);
        o.setAllowUnicode(true);
        o.setWidth(120);
        Object plain = PRETTY.convertValue(node, Object.class);
        return new Yaml(o).dump(plain);
    }

    /** A duration as people read it: 42s, 3m12s, 2h05m, 4d03h. */
    public static String duration(Duration d) {
        long s = Math.max(0, d.getSeconds());
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return (s / 60) + "m" + String.format("%02ds", s % 60);
        }
        if (s < 86400) {
            return (s / 3600) + "h" + String.format("%02dm", (s % 3600) / 60);
        }
        return (s / 86400) + "d" + String.format("%02dh", (s % 86400) / 3600);
    }

    /** How long ago an ISO-8601 instant was, or "-" when absent. */
    public static String age(String instant, Instant now) {
        if (instant == null || instant.isBlank() || instant.equals("null")) {
            return "-";
        }
        try {
            return duration(Duration.between(Instant.parse(instant), now));
        } catch (RuntimeException e) {
            return instant;
        }
    }

    /** A byte count as KiB/MiB/GiB/TiB. */
    public static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
