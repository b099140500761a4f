package io.gantry.cli.jobfile;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job file: one YAML document with exactly the fields of the REST API's JSON body ({@code POST /v1/jobs}). It is
 * read into a plain tree (maps, lists, strings, numbers, booleans, nulls) that is sent as JSON unchanged, and every
 * field path ({@code tasks[0].gpus}) keeps the line it was written on, so that both the CLI's own checks and the
 * API's answers can point at the line.
 */
public final class JobFile {
    private final String fileName;
    private final Map<String, Object> body;
    private final Map<String, Integer> lines;

    private JobFile(String fileName, Map<String, Object> body, Map<String, Integer> lines) {
        this.fileName = fileName;
        this.body = body;
        this.lines = lines;
    }

    /** One thing wrong with a job file: where ({@code line} 0 = the file as a whole), which field, and what. */
    public record Problem(int line, String field, String message) {
        public String render(String fileName) {
            return fileName + (line > 0 ? ":" + line : "") + ": " + (field.isEmpty() ? "" : field + ": ") + message;
        }
    }

    /** The file cannot be sent: every problem found, in line order. */
    public static final class Invalid extends Exception {
        private final String fileName;
        private final List<Problem> problems;

        public Invalid(String fileName, List<Problem> problems) {
            super(problems.isEmpty() ? fileName + ": invalid" : problems.get(0).render(fileName));
            this.fileName = fileName;
            this.problems = problems.stream().sorted(Comparator.comparingInt(Problem::line)).toList();
        }

        public List<Problem> problems() {
            return problems;
        }

        public List<String> lines() {
            return problems.stream().map(p -> p.render(fileName)).toList();
        }
    }

    /** Reads and checks a job file; {@link Invalid} lists every problem with its line. */
    public static JobFile parse(String fileName, String text) throws Invalid {
        JobFile file = read(fileName, text);
        List<Problem> problems = new ArrayList<>();
        for (JobFileSchema.Violation v : JobFileSchema.check(file.body)) {
            problems.add(new Problem(file.lineOf(v.field()), v.field(), v.message()));
        }
        if (!problems.isEmpty()) {
            throw new Invalid(fileName, problems);
        }
        return file;
    }

    /** Reads the YAML into the tree without checking the fields (syntax, one document, a mapping, no duplicates). */
    static JobFile read(String fileName, String text) throws Invalid {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(20);
        options.setCodePointLimit(1024 * 1024);
        Node root;
        try {
            root = new Yaml(new SafeConstructor(options)).compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            String what = e.getProblem() != null ? e.getProblem() : e.getMessage();
            if (e.getContext() != null && e.getContext().contains("expected a single document")) {
                what = "a job file holds one job (one YAML document, no second `---`)";
            }
            throw new Invalid(fileName, List.of(new Problem(mark == null ? 0 : mark.getLine() + 1, "",
                    "not valid YAML: " + what)));
        } catch (YAMLException e) {
            throw new Invalid(fileName, List.of(new Problem(0, "", "not valid YAML: " + e.getMessage())));
        }
        if (root == null) {
            throw new Invalid(fileName, List.of(new Problem(0, "", "is empty; a job file needs at least `name` and "
                    + "`tasks`")));
        }
        Map<String, Integer> lines = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        Object tree = convert(root, "", lines, problems);
        if (!problems.isEmpty()) {
            throw new Invalid(fileName, problems);
        }
        if (!(tree instanceof Map<?, ?>)) {
            throw new Invalid(fileName, List.of(new Problem(root.getStartMark().getLine() + 1, "",
                    "must be a mapping of fields (name: ..., tasks: ...), not " + JobFileSchema.kind(tree))));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> body = (Map<String, Object>) tree;
        return new JobFile(fileName, body, lines);
    }

    private static Object convert(Node node, String path, Map<String, Integer> lines, List<Problem> problems) {
        lines.putIfAbsent(path, node.getStartMark().getLine() + 1);
        if (node instanceof MappingNode m) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (NodeTuple t : m.getValue()) {
                int keyLine = t.getKeyNode().getStartMark().getLine() + 1;
                if (!(t.getKeyNode() instanceof ScalarNode k)) {
                    problems.add(new Problem(keyLine, path, "field names must be plain words"));
                    continue;
                }
                String key = k.getValue();
                String child = path.isEmpty() ? key : path + "." + key;
                if (map.containsKey(key)) {
                    problems.add(new Problem(keyLine, child, "is given twice (first on line " + lines.get(child) + ")"));
                    continue;
                }
                // a field points at the line of its key, where a reader looks for it
                lines.put(child, keyLine);
                map.put(key, convert(t.getValueNode(), child, lines, problems));
            }
            return map;
        }
        if (node instanceof SequenceNode s) {
            List<Object> list = new ArrayList<>();
            for (int i = 0; i < s.getValue().size(); i++) {
                list.add(convert(s.getValue().get(i), path + "[" + i + "]", lines, problems));
            }
            return list;
        }
        ScalarNode scalar = (ScalarNode) node;
        return scalar(scalar, path, problems);
    }

    /** YAML's implicit types, as JSON has them: null, booleans, integers, decimals; everything else is text. */
    private static Object scalar(ScalarNode node, String path, List<Problem> problems) {
        String v = node.getValue();
        Tag tag = node.getTag();
        if (Tag.NULL.equals(tag)) {
            return null;
        }
        if (Tag.BOOL.equals(tag)) {
            String s = v.toLowerCase(java.util.Locale.ROOT);
            return s.equals("true") || s.equals("yes") || s.equals("on") || s.equals("y");
        }
        if (Tag.INT.equals(tag)) {
            String digits = v.replace("_", "");
            try {
                BigInteger i = new BigInteger(digits);
                return i.bitLength() < 64 ? (Object) i.longValue() : i;
            } catch (NumberFormatException e) {
                problems.add(new Problem(node.getStartMark().getLine() + 1, path, "write numbers in decimal, not " + v));
                return v;
            }
        }
        if (Tag.FLOAT.equals(tag)) {
            try {
                return new BigDecimal(v.replace("_", ""));
            } catch (NumberFormatException e) {
                problems.add(new Problem(node.getStartMark().getLine() + 1, path, "must be a finite number, not " + v));
                return v;
            }
        }
        return v;
    }

    /** The job as the API's JSON body. */
    public Map<String, Object> body() {
        return body;
    }

    public String fileName() {
        return fileName;
    }

    /**
     * The line of a field path as the API names it ({@code tasks[0].gpus}, {@code checkpoint.dir}); a field that is
     * not in the file (a missing one) takes the line of the nearest enclosing one; 0 when nothing encloses it.
     */
    public int lineOf(String field) {
        String path = field == null ? "" : field;
        while (true) {
            Integer line = lines.get(path);
            if (line != null) {
                return path.isEmpty() ? 0 : line;
            }
            if (path.isEmpty()) {
                return 0;
            }
            int dot = path.lastIndexOf('.');
            int bracket = path.lastIndexOf('[');
            int cut = Math.max(dot, bracket);
            path = cut < 0 ? "" : path.substring(0, cut);
        }
    }

    /** An error the API gave for a field of this file, pointing at its line. */
    public String locate(String field, String message) {
        String f = field == null || field.equals("body") ? "" : field;
        return new Problem(lineOf(f), f, message).render(fileName);
    }
}
