package io.gantry.testkit;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The house rule "decision logic is plain Java", checked on the compiled classes of a core package (so a fully
 * qualified name or a call hidden in a lambda cannot slip past it, as it could past a scan of import lines): a core
 * class depends only on its own package tree, the shared resource model ({@code io.gantry.model}, held to the
 * same rule) and on {@code java.lang}, {@code java.util} (not its concurrency executors, nor logging), {@code java.time}, {@code java.math}, {@code java.text} and {@code java.nio.charset}
 * (encoding text is computation; files and channels are not); and it never reads the wall
 * clock or the environment, starts threads or processes, sleeps or exits.
 */
public final class PureCore {
    private static final Set<String> SYSTEM_CALLS = Set.of("currentTimeMillis", "nanoTime", "getenv", "getProperty",
            "getProperties", "setProperty", "exit", "gc", "load", "loadLibrary");

    /** The one package of Gantry's own a core may use besides its own: the shared, equally pure resource model. */
    public static final String SHARED_MODEL = "io.gantry.model";

    private PureCore() {
    }

    /** Every violation in the core package (and below), one sentence each; empty when the core is pure. */
    public static List<String> violations(String corePackage) {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(corePackage);
        if (classes.isEmpty()) {
            return List.of("no compiled classes found in " + corePackage);
        }
        return violations(classes, corePackage);
    }

    static List<String> violations(JavaClasses classes, String corePackage) {
        ArchRule dependencies = noClasses().that().resideInAPackage(corePackage + "..")
                .should().dependOnClassesThat(notAllowed(corePackage));
        ArchRule calls = noClasses().that().resideInAPackage(corePackage + "..")
                .should().callCodeUnitWhere(impureCall());
        List<String> found = new ArrayList<>();
        for (ArchRule rule : List.of(dependencies, calls)) {
            EvaluationResult result = rule.allowEmptyShould(true).evaluate(classes);
            found.addAll(result.getFailureReport().getDetails());
        }
        return found;
    }

    private static DescribedPredicate<JavaClass> notAllowed(String corePackage) {
        return DescribedPredicate.describe("are not plain Java (own package, the shared model, java.lang/util/time/math/text)", c -> {
            String pkg = c.getPackageName();
            if (pkg.equals(corePackage) || pkg.startsWith(corePackage + ".")) {
                return false;
            }
            if (pkg.equals(SHARED_MODEL) || pkg.startsWith(SHARED_MODEL + ".")) {
                // the resource rules every core shares, itself held to this rule (see gantry-model)
                return false;
            }
            if (pkg.equals("java.util.concurrent")) {
                return !c.getName().equals("java.util.concurrent.TimeUnit");
            }
            if (pkg.startsWith("java.util.concurrent.") && !pkg.equals("java.util.concurrent.atomic")) {
                return true;
            }
            if (pkg.startsWith("java.util.logging")) {
                return true;
            }
            if (pkg.equals("java.nio.charset")) {
                // encoding text to bytes is computation (UUIDs and hashes of names need it), not I/O
                return false;
            }
            return !(pkg.startsWith("java.lang") || pkg.startsWith("java.util") || pkg.startsWith("java.time")
                    || pkg.startsWith("java.math") || pkg.startsWith("java.text"));
        });
    }

    private static DescribedPredicate<JavaCall<?>> impureCall() {
        return DescribedPredicate.describe("read the wall clock or the environment, start threads or processes, "
                + "sleep or exit", call -> {
            String owner = call.getTargetOwner().getName();
            String name = call.getName();
            return owner.equals("java.lang.System") && SYSTEM_CALLS.contains(name)
                    || owner.startsWith("java.time.") && name.equals("now")
                    || owner.equals("java.time.Clock") && name.startsWith("system")
                    || owner.equals("java.lang.Thread") || owner.equals("java.lang.ThreadGroup")
                    || owner.equals("java.lang.Runtime") || owner.equals("java.lang.ProcessBuilder")
                    || owner.equals("java.lang.ProcessHandle");
        });
    }
}
