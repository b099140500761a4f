package io.gantry.testkit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples of a {@code /prometheus} page (the text exposition format), to check what an instance exports: each
 * sample's name, labels and value.
 */
public final class PrometheusText {
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample: {@code name{labels} value}. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String label) {
            return labels.get(label);
        }
    }

    private final List<Sample> samples;

    private PrometheusText(List<Sample> samples) {
        this.samples = samples;
    }

    public static PrometheusText parse(String page) {
        List<Sample> out = new ArrayList<>();
        for (String line : page.split("\n")) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int end = line.lastIndexOf('}');
            String name;
            Map<String, String> labels = new LinkedHashMap<>();
            String rest;
            if (brace >= 0 && end > brace) {
                name = line.substring(0, brace);
                Matcher m = LABEL.matcher(line.substring(brace + 1, end));
                while (m.find()) {
                    labels.put(m.group(1), m.group(2));
                }
                rest = line.substring(end + 1).strip();
            } else {
                int space = line.indexOf(' ');
                name = line.substring(0, space);
                rest = line.substring(space + 1).strip();
            }
            String value = rest.split("\\s+")[0];
            out.add(new Sample(name, Map.copyOf(labels), switch (value) {
                case "NaN" -> Double.NaN;
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(value);
            }));
        }
        return new PrometheusText(List.copyOf(out));
    }

    /** Every sample of {@code name}. */
    public List<Sample> samples(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /** The sum of {@code name}'s samples whose labels include {@code labels} (0 when there is none). */
    public double sum(String name, Map<String, String> labels) {
        return samples(name).stream().filter(s -> s.labels().entrySet().containsAll(labels.entrySet()))
                .mapToDouble(Sample::value).sum();
    }

    /** Whether the page has a sample of {@code name}. */
    public boolean has(String name) {
        return !samples(name).isEmpty();
    }
}
