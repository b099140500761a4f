package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Draws a Grafana dashboard (the JSON in deploy/grafana/dashboards) as one PNG, from the data a real Prometheus
 * holds: every panel at its grid position, a time series panel as a line chart of its queries over the window (one
 * line per result series, named by its labels), a stat panel as its current value. Not Grafana's pixels, but the
 * same queries on the same data, so the README shows what the dashboards show.
 */
final class DashboardRenderer {
    /** Grafana's grid: 24 columns, rows of 30 px; drawn at 60 px per column. */
    private static final int COLUMN = 60;
    private static final int ROW = 30;
    private static final int GAP = 6;
    private static final Color BACKGROUND = new Color(0x11, 0x12, 0x17);
    private static final Color PANEL = new Color(0x18, 0x1b, 0x1f);
    private static final Color TEXT = new Color(0xd8, 0xd9, 0xda);
    private static final Color[] LINES = {new Color(0x73, 0xbf, 0x69), new Color(0xf2, 0xcc, 0x0c),
            new Color(0x57, 0x94, 0xf2), new Color(0xff, 0x78, 0x0a), new Color(0xf2, 0x49, 0x5c),
            new Color(0xb8, 0x77, 0xd9), new Color(0x8a, 0xb8, 0xff), new Color(0x96, 0xd9, 0x8d)};

    /** A panel as drawn: its title and how many series (or values) it showed. */
    record Drawn(String title, int series) {
    }

    /** Prometheus's answers: an instant query and a range query, each the JSON of its HTTP API. */
    interface Source {
        JsonNode instant(String expr);

        JsonNode range(String expr, Instant from, Instant to, int stepSeconds);
    }

    private DashboardRenderer() {
    }

    static List<Drawn> render(JsonNode dashboard, Source prometheus, Instant from, Instant to,
                              Function<String, String> variables, Path png) throws IOException {
        int width = 24 * COLUMN;
        int rows = 0;
        for (JsonNode p : dashboard.path("panels")) {
            rows = Math.max(rows, p.path("gridPos").path("y").asInt() + p.path("gridPos").path("h").asInt());
        }
        int titleHeight = 40;
        BufferedImage image = new BufferedImage(width, titleHeight + rows * ROW, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(BACKGROUND);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setColor(TEXT);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.drawString(dashboard.path("title").asText() + "   (" + from.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                + " .. " + to.truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ", drawn from Prometheus)", GAP * 2, 26);
        int step = (int) Math.max(1, (to.getEpochSecond() - from.getEpochSecond()) / 120);
        List<Drawn> drawn = new ArrayList<>();
        for (JsonNode p : dashboard.path("panels")) {
            JsonNode pos = p.path("gridPos");
            int x = pos.path("x").asInt() * COLUMN + GAP / 2;
            int y = titleHeight + pos.path("y").asInt() * ROW + GAP / 2;
            int w = pos.path("w").asInt() * COLUMN - GAP;
            int h = pos.path("h").asInt() * ROW - GAP;
            String unit = p.path("fieldConfig").path("defaults").path("unit").asText("");
            List<String> exprs = new ArrayList<>();
            p.path("targets").forEach(t -> exprs.add(variables.apply(t.path("expr").asText())));
            if (p.path("type").asText().equals("stat")) {
                drawn.add(stat(g, p.path("title").asText(), exprs, unit, prometheus, x, y, w, h));
            } else {
                drawn.add(series(g, p, exprs, unit, prometheus, from, to, step, x, y, w, h));
            }
        }
        g.dispose();
        Files.createDirectories(png.toAbsolutePath().getParent());
        ImageIO.write(image, "png", png.toFile());
        return drawn;
    }

    private static Drawn stat(Graphics2D g, String title, List<String> exprs, String unit, Source prometheus, int x,
                              int y, int w, int h) {
        g.setColor(PANEL);
        g.fillRect(x, y, w, h);
        g.setColor(TEXT);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        g.drawString(title, x + 10, y + 20);
        JsonNode result = prometheus.instant(exprs.get(0)).path("data").path("result");
        String value = result.isEmpty() ? "No data" : format(result.get(0).path("value").get(1).asDouble(), unit);
        g.setColor(result.isEmpty() ? TEXT : LINES[0]);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, Math.min(48, h / 2)));
        int textWidth = g.getFontMetrics().stringWidth(value);
        g.drawString(value, x + (w - textWidth) / 2, y + h / 2 + 22);
        return new Drawn(title, result.size());
    }

    private static Drawn series(Graphics2D g, JsonNode panel, List<String> exprs, String unit, Source prometheus,
                                Instant from, Instant to, int step, int x, int y, int w, int h) {
        String title = panel.path("title").asText();
        XYChart chart = new XYChartBuilder().width(w).height(h).title(title).build();
        Styler.ChartTheme theme = Styler.ChartTheme.XChart;
        chart.getStyler().setTheme(theme.newInstance(theme));
        chart.getStyler().setChartBackgroundColor(PANEL);
        chart.getStyler().setPlotBackgroundColor(PANEL);
        chart.getStyler().setPlotBorderVisible(false);
        chart.getStyler().setChartFontColor(TEXT);
        chart.getStyler().setAxisTickLabelsColor(TEXT);
        chart.getStyler().setChartTitleBoxVisible(false);
        chart.getStyler().setChartTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        chart.getStyler().setLegendBackgroundColor(PANEL);
        chart.getStyler().setLegendBorderColor(PANEL);
        chart.getStyler().setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setPlotGridLinesColor(new Color(0x2c, 0x30, 0x35));
        chart.getStyler().setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        chart.getStyler().setDatePattern("HH:mm:ss");
        chart.getStyler().setSeriesColors(LINES);
        chart.getStyler().setYAxisDecimalPattern(unit.equals("percentunit") ? "0%" : "#,##0.##");
        int count = 0;
        for (int i = 0; i < exprs.size(); i++) {
            JsonNode target = panel.path("targets").get(i);
            for (JsonNode s : prometheus.range(exprs.get(i), from, to, step).path("data").path("result")) {
                List<Date> xs = new ArrayList<>();
                List<Double> ys = new ArrayList<>();
                s.path("values").forEach(v -> {
                    xs.add(new Date(Math.round(v.get(0).asDouble() * 1000)));
                    ys.add(v.get(1).asDouble());
                });
                if (xs.isEmpty()) {
                    continue;
                }
                String name = legend(target.path("legendFormat").asText(""), s.path("metric"), exprs.size() > 1
                        ? target.path("refId").asText() : "");
                while (chart.getSeriesMap().containsKey(name)) {
                    name = name + " ";
                }
                XYSeries line = chart.addSeries(name, xs, ys);
                line.setMarker(SeriesMarkers.NONE);
                line.setLineWidth(1.5f);
                count++;
            }
        }
        if (count == 0) {
            chart.addSeries("no data", List.of(Date.from(from), Date.from(to)), List.of(0.0, 0.0))
                    .setMarker(SeriesMarkers.NONE);
        }
        g.drawImage(BitmapEncoder.getBufferedImage(chart), x, y, null);
        return new Drawn(title, count);
    }

    /** Grafana's legend format ({@code {{queue}} used}) applied to a series' labels, else its labels. */
    private static String legend(String format, JsonNode labels, String fallback) {
        if (!format.isEmpty()) {
            String s = format;
            var names = labels.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                s = s.replace("{{" + n + "}}", labels.path(n).asText());
            }
            return s.replaceAll("\\{\\{[^}]*}}", "").strip();
        }
        List<String> parts = new ArrayList<>();
        labels.fieldNames().forEachRemaining(n -> {
            if (!n.equals("__name__") && !n.equals("job") && !n.equals("instance")) {
                parts.add(n + "=" + labels.path(n).asText());
            }
        });
        String s = String.join(", ", parts);
        return s.isEmpty() ? (fallback.isEmpty() ? "value" : fallback) : s;
    }

    private static String format(double v, String unit) {
        if (unit.equals("percentunit")) {
            return String.format(Locale.ROOT, "%.1f%%", v * 100);
        }
        return v == Math.rint(v) && Math.abs(v) < 1e12 ? String.format(Locale.ROOT, "%,d", (long) v)
                : String.format(Locale.ROOT, "%,.2f", v);
    }
}
