package io.gantry.cli;

import io.gantry.cli.api.ApiClient;
import picocli.CommandLine.Option;

import java.time.Instant;
import java.time.LocalDate;

/** The window and tenant options of the billing reads ({@code usage}, {@code costs}) and the query they make. */
final class WindowOptions {
    @Option(names = "--from", paramLabel = "WHEN", description = "from this instant or date (2026-11-01: its midnight in billing's time zone)")
    String from;

    @Option(names = "--to", paramLabel = "WHEN", description = "up to this instant or date (exclusive)")
    String to;

    @Option(names = {"-t", "--tenant"}, paramLabel = "TENANT", description = "admins: one tenant")
    String tenant;

    /** Whether --from or --to was given. */
    boolean bounded() {
        return from != null || to != null;
    }

    /**
     * {@code path} with the window and tenant as query parameters, after {@code first} (a parameter already
     * encoded as {@code name=value}, or null).
     */
    String query(String path, String first) {
        StringBuilder q = new StringBuilder(path);
        String sep = "?";
        if (first != null) {
            q.append(sep).append(first);
            sep = "&";
        }
        if (from != null) {
            q.append(sep).append("from=").append(ApiClient.encode(instant(from, "--from")));
            sep = "&";
        }
        if (to != null) {
            q.append(sep).append("to=").append(ApiClient.encode(instant(to, "--to")));
            sep = "&";
        }
        if (tenant != null) {
            q.append(sep).append("tenant=").append(ApiClient.encode(tenant));
        }
        return q.toString();
    }

    /**
     * An instant or a date as the API takes it: a bare date is sent as written, and billing reads it as the midnight
     * of its time zone (the zone its months and invoices count in), not of this machine's or UTC.
     */
    static String instant(String s, String option) {
        try {
            return Instant.parse(s).toString();
        } catch (RuntimeException e) {
            try {
                return LocalDate.parse(s).toString();
            } catch (RuntimeException e2) {
                throw new CliException(ExitCode.INVALID, option + " must be a date (2026-11-01) or an instant "
                        + "(2026-11-01T12:00:00Z), not " + s);
            }
        }
    }
}
