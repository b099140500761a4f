package io.gantry.launcher;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/** The launcher's command lines: {@code --key value} or {@code --key=value}, flags without a value, {@code --help}. */
final class CliArgs {
    private CliArgs() {
    }

    /**
     * Options from {@code args[from..]}; a flag present maps to {@code "true"}. {@code --help} prints {@code usage}
     * and exits 0; anything else unexpected goes to {@code fail}, which exits.
     */
    static Map<String, String> parse(String[] args, int from, Collection<String> known, Collection<String> flags,
                                     String usage, Consumer<String> fail) {
        return parse(args, from, known, flags, java.util.List.of(), usage, fail);
    }

    /** The same, where each of {@code repeatable} may be given more than once: its values joined with ','. */
    static Map<String, String> parse(String[] args, int from, Collection<String> known, Collection<String> flags,
                                     Collection<String> repeatable, String usage, Consumer<String> fail) {
        Map<String, String> opts = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(usage);
                System.exit(0);
            }
            if (!a.startsWith("--")) {
                fail.accept("unexpected argument " + a);
                return opts;
            }
            String key = a.substring(2);
            if (flags.contains(key)) {
                opts.put(key, "true");
                continue;
            }
            String value;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                value = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                fail.accept("--" + key + " needs a value");
                return opts;
            }
            if (!known.contains(key)) {
                fail.accept("unknown option --" + key);
                return opts;
            }
            if (repeatable.contains(key)) {
                opts.merge(key, value, (was, more) -> was + "," + more);
            } else {
                opts.put(key, value);
            }
        }
        return opts;
    }
}
