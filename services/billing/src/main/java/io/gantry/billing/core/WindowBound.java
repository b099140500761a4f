package io.gantry.billing.core;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;

/**
 * One end of a usage or cost window as a caller writes it: an ISO-8601 instant ({@code 2026-11-01T12:00:00Z}), or a
 * date ({@code 2026-11-01}) meaning its midnight in billing's time zone, as billing months and invoices count days.
 */
public final class WindowBound {
    private WindowBound() {
    }

    /** The instant {@code value} names, null when it is absent; {@link InvalidInput} naming {@code field} if neither. */
    public static Instant parse(String field, String value, ZoneId zone) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.trim();
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException notInstant) {
            try {
                return LocalDate.parse(v).atStartOfDay(zone).toInstant();
            } catch (DateTimeException notDate) { // not a date, or one whose midnight is no instant
                throw InvalidInput.of(field, "must be an ISO-8601 instant (2026-01-01T00:00:00Z) or a date "
                        + "(2026-01-01, midnight in billing's time zone " + zone.getId() + ")");
            }
        }
    }
}
