package io.gantry.testkit;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every HTTP route of a service must be in its OpenAPI document. The routes are read from the compiled controllers
 * (Micronaut's {@code @Controller} and {@code @Get}/{@code @Post}/... annotations, by reflection, so this module needs
 * no Micronaut), the document from {@code META-INF/swagger/*.yml} on the class path (micronaut-openapi writes it at
 * compile time). A route added without its document, or a document that lost a route, makes the service's test fail.
 */
public final class OpenApiCoverage {
    private static final String HTTP_ANNOTATIONS = "io.micronaut.http.annotation.";
    private static final Set<String> VERBS = Set.of("Get", "Post", "Put", "Delete", "Patch");

    private OpenApiCoverage() {
    }

    /** "GET /v1/jobs/{id}" for every route of the controllers under {@code basePackage}. */
    public static Set<String> routes(String basePackage) {
        Set<String> out = new TreeSet<>();
        for (JavaClass c : new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(basePackage)) {
            Class<?> type = c.reflect();
            Annotation controller = annotation(type.getAnnotations(), "Controller");
            if (controller == null) {
                continue;
            }
            String base = firstPath(controller);
            for (Method m : type.getMethods()) {
                for (Annotation a : m.getAnnotations()) {
                    String name = a.annotationType().getSimpleName();
                    if (a.annotationType().getName().equals(HTTP_ANNOTATIONS + name) && VERBS.contains(name)) {
                        out.add(name.toUpperCase(Locale.ROOT) + " " + join(base, firstPath(a)));
                    }
                }
            }
        }
        return out;
    }

    /** "GET /v1/jobs/{id}" for every operation of every OpenAPI document on the class path. */
    public static Set<String> documented(ClassLoader loader) throws IOException {
        Set<String> out = new TreeSet<>();
        for (String doc : documents(loader)) {
            boolean inPaths = false;
            String path = null;
            for (String line : doc.split("\n")) {
                if (!line.startsWith(" ")) {
                    inPaths = line.startsWith("paths:");
                    continue;
                }
                if (!inPaths) {
                    continue;
                }
                if (line.startsWith("  /") && line.endsWith(":") && !line.startsWith("   ")) {
                    path = line.trim();
                    path = path.substring(0, path.length() - 1).replace("\"", "").replace("'", "");
                } else if (path != null && line.startsWith("    ") && !line.startsWith("     ")) {
                    String verb = line.trim().replace(":", "");
                    if (VERBS.contains(capitalized(verb))) {
                        out.add(verb.toUpperCase(Locale.ROOT) + " " + path);
                    }
                }
            }
        }
        return out;
    }

    /** The routes of {@code basePackage} that no OpenAPI document on the class path describes. */
    public static List<String> undocumented(String basePackage, ClassLoader loader) throws IOException {
        Set<String> documented = documented(loader);
        List<String> missing = new ArrayList<>();
        for (String route : routes(basePackage)) {
            if (!documented.contains(route)) {
                missing.add(route);
            }
        }
        return missing;
    }

    private static List<String> documents(ClassLoader loader) throws IOException {
        List<String> out = new ArrayList<>();
        Enumeration<URL> dirs = loader.getResources("META-INF/swagger");
        while (dirs.hasMoreElements()) {
            URL dir = dirs.nextElement();
            if (!"file".equals(dir.getProtocol())) {
                continue;
            }
            java.io.File[] files = new java.io.File(java.net.URI.create(dir.toString())).listFiles(
                    (d, n) -> n.endsWith(".yml") || n.endsWith(".yaml"));
            if (files == null) {
                continue;
            }
            for (java.io.File f : files) {
                try (InputStream in = f.toURI().toURL().openStream()) {
                    out.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private static Annotation annotation(Annotation[] annotations, String simpleName) {
        for (Annotation a : annotations) {
            if (a.annotationType().getName().equals(HTTP_ANNOTATIONS + simpleName)) {
                return a;
            }
        }
        return null;
    }

    /** The annotation's path: {@code value}, else {@code uri}, else "" (the controller's own path). */
    private static String firstPath(Annotation a) {
        for (String attribute : List.of("value", "uri")) {
            try {
                Object v = a.annotationType().getMethod(attribute).invoke(a);
                if (v instanceof String s && !s.isEmpty()) {
                    return s;
                }
            } catch (ReflectiveOperationException e) {
                // no such attribute on this annotation: try the next
            }
        }
        return "";
    }

    private static String join(String base, String path) {
        String joined = ("/" + base + "/" + path).replaceAll("/+", "/");
        // a query template ({?from,to}) is not part of the path
        joined = joined.replaceAll("\\{\\?[^}]*}", "");
        if (joined.length() > 1 && joined.endsWith("/")) {
            joined = joined.substring(0, joined.length() - 1);
        }
        return joined;
    }

    private static String capitalized(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1).toLowerCase(Locale.ROOT);
    }
}
