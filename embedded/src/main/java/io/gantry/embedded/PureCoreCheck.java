package io.gantry.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The build's guard of the house rule "decision logic is plain Java": scans the sources of a core package and
 * lists every import or call that is not allowed there (frameworks, Kafka, Avro, JDBC, fabric8, I/O, threads,
 * the wall clock). Each service runs it from a test, so a violation fails {@code mvn verify}.
 */
public final class PureCoreCheck {
    private static final List<String> ALLOWED_IMPORTS = List.of(
            "java.util.", "java.time.", "java.math.", "java.text.", "java.lang.");
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?([\\w.]+)(\\.\\*)?\\s*;", Pattern.MULTILINE);
    private static final List<Pattern> FORBIDDEN_CALLS = List.of(
            Pattern.compile("\\bnew\\s+Thread\\b"),
            Pattern.compile("\\bThread\\.sleep\\b"),
            Pattern.compile("\\bSystem\\.(currentTimeMillis|nanoTime|getenv|getProperty|exit)\\b"),
            Pattern.compile("\\b(Instant|LocalDateTime|LocalDate|ZonedDateTime|OffsetDateTime)\\.now\\(\\s*\\)"),
            Pattern.compile("\\bClock\\.system"),
            Pattern.compile("\\bjava\\.(io|nio|net|sql)\\."),
            Pattern.compile("\\bjava\\.util\\.concurrent\\.(Executor|ThreadPool)"));

    private PureCoreCheck() {
    }

    /**
     * @param sourceRoot  e.g. {@code src/main/java}
     * @param corePackage e.g. {@code io.gantry.queue.core}; imports of this package and below are allowed
     * @return one line per violation: {@code File.java:12: import org.apache.kafka...}
     */
    public static List<String> violations(Path sourceRoot, String corePackage) {
        Path dir = sourceRoot.resolve(corePackage.replace('.', '/'));
        if (!Files.isDirectory(dir)) {
            return List.of(dir + ": core package directory does not exist");
        }
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String src = Files.readString(file);
                String[] lines = src.split("\n", -1);
                for (int i = 0; i < lines.length; i++) {
                    String line = lines[i];
                    Matcher m = IMPORT.matcher(line.trim());
                    if (m.find()) {
                        String imported = m.group(2);
                        boolean ok = imported.startsWith(corePackage + ".") || imported.equals(corePackage)
                                || ALLOWED_IMPORTS.stream().anyMatch(imported::startsWith);
                        if (ok && imported.startsWith("java.util.concurrent.") && !imported.startsWith("java.util.concurrent.atomic")
                                && !imported.equals("java.util.concurrent.TimeUnit")) {
                            ok = false;
                        }
                        if (!ok) {
                            found.add(file.getFileName() + ":" + (i + 1) + ": import " + imported);
                        }
                        continue;
                    }
                    String code = line.replaceAll("//.*$", "");
                    for (Pattern p : FORBIDDEN_CALLS) {
                        if (p.matcher(code).find()) {
                            found.add(file.getFileName() + ":" + (i + 1) + ": " + code.trim());
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }
}
