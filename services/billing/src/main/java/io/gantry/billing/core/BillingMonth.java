package io.gantry.billing.core;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** A calendar month in the invoicing time zone: the half-open interval of instants it covers. */
public record BillingMonth(YearMonth month, ZoneId zone) {
    public BillingMonth {
        Objects.requireNonNull(month, "month");
        Objects.requireNonNull(zone, "zone");
    }

    /** {@code yyyy-MM}; anything else is refused naming {@code month}. */
    public static BillingMonth parse(String text, ZoneId zone) {
        try {
            YearMonth m = YearMonth.parse(text == null ? "" : text.trim());
            if (m.getYear() < 1970 || m.getYear() > 9998) {
                throw InvalidInput.of("month", "must be between 1970-01 and 9998-12");
            }
            return new BillingMonth(m, zone);
        } catch (DateTimeParseException e) {
            throw InvalidInput.of("month", "must be a month such as 2026-03 (yyyy-MM)");
        }
    }

    public static BillingMonth containing(Instant t, ZoneId zone) {
        return new BillingMonth(YearMonth.from(t.atZone(zone)), zone);
    }

    /** The months an interval reaches, from the one containing {@code start} to the one containing {@code end}. */
    public static List<BillingMonth> reached(Instant start, Instant end, ZoneId zone) {
        List<BillingMonth> out = new ArrayList<>();
        YearMonth last = YearMonth.from(end.atZone(zone));
        for (YearMonth m = YearMonth.from(start.atZone(zone)); !m.isAfter(last); m = m.plusMonths(1)) {
            out.add(new BillingMonth(m, zone));
        }
        return out;
    }

    public Instant from() {
        return month.atDay(1).atStartOfDay(zone).toInstant();
    }

    public Instant to() {
        return month.plusMonths(1).atDay(1).atStartOfDay(zone).toInstant();
    }

    public UsageWindow window() {
        return new UsageWindow(from(), to());
    }

    public BillingMonth previous() {
        return new BillingMonth(month.minusMonths(1), zone);
    }

    @Override
    public String toString() {
        return month.toString();
    }
}
