package io.gantry.billing.money;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * YAML read without lossy guesses: a plain {@code 2.50} stays the string "2.50" (never a binary double) and a
 * timestamp stays a string (never a java.util.Date in the JVM's zone), so prices and dates are exactly as written.
 */
public final class ExactYaml {
    private ExactYaml() {
    }

    /**
     * What is wrong with a document {@link #load} refused, for the one who wrote it: SnakeYAML's problem and where
     * ({@code found duplicate key currency (line 2, column 1)}), not only its context ("while constructing a mapping").
     */
    public static String problem(RuntimeException e) {
        if (e instanceof org.yaml.snakeyaml.error.MarkedYAMLException m && m.getProblem() != null) {
            org.yaml.snakeyaml.error.Mark at = m.getProblemMark() != null ? m.getProblemMark() : m.getContextMark();
            return m.getProblem().strip() + (at == null ? "" : " (line " + (at.getLine() + 1) + ", column "
                    + (at.getColumn() + 1) + ")");
        }
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        return message.lines().findFirst().orElse(message).strip();
    }

    public static Object load(String text) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(10);
        options.setCodePointLimit(1_000_000);
        Resolver resolver = new Resolver() {
            @Override
            protected void addImplicitResolvers() {
                addImplicitResolver(org.yaml.snakeyaml.nodes.Tag.BOOL, BOOL, "yYnNtTfFoO");
                addImplicitResolver(org.yaml.snakeyaml.nodes.Tag.INT, INT, "-+0123456789");
                addImplicitResolver(org.yaml.snakeyaml.nodes.Tag.NULL, NULL, "~nN\0");
                addImplicitResolver(org.yaml.snakeyaml.nodes.Tag.NULL, EMPTY, null);
            }
        };
        Yaml yaml = new Yaml(new SafeConstructor(options), new Representer(new org.yaml.snakeyaml.DumperOptions()),
                new org.yaml.snakeyaml.DumperOptions(), options, resolver);
        return yaml.load(text);
    }
}
