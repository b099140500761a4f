package io.gantry.cli.output;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Columns aligned with spaces, headers in capitals, no borders: easy to read and to cut/awk. */
public final class Table {
    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    public Table(String... headers) {
        this.headers = Arrays.asList(headers);
    }

    public Table row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("a row of " + headers.size() + " cells, not " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object c : cells) {
            row.add(c == null || c.toString().isEmpty() ? "-" : oneLine(c.toString()));
        }
        rows.add(row);
        return this;
    }

    public int size() {
        return rows.size();
    }

    /** The table with a trailing newline; the last column is not padded. */
    public String render() {
        int[] width = new int[headers.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = headers.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        StringBuilder out = new StringBuilder();
        line(out, headers, width);
        rows.forEach(r -> line(out, r, width));
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] width) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            l.append(cells.get(i));
            if (i < cells.size() - 1) {
                l.append(" ".repeat(width[i] - cells.get(i).length() + 3));
            }
        }
        out.append(l.toString().stripTrailing()).append('\n');
    }

    /** A cell is one line: a message with line breaks or tabs would break the columns. */
    private static String oneLine(String s) {
        return s.replaceAll("[\\r\\n\\t]+", " ");
    }
}
