package io.gantry.admission.http;

import io.gantry.admission.db.JobStore;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;

/**
 * Listing cursors: the last job of a page (its submit time and id), opaque to clients. A cursor that does not
 * decode is refused rather than taken for "from the start".
 */
final class Cursors {
    private static final String VERSION = "v1";

    private Cursors() {
    }

    static String encode(JobStore.Cursor c) {
        String time = c.submittedAt() == null ? "-" : c.submittedAt().getEpochSecond() + "." + c.submittedAt().getNano();
        String raw = VERSION + "|" + time + "|" + c.jobId();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }

    /** The cursor, or null when {@code text} is not one this API made. */
    static JobStore.Cursor decode(String text) {
        try {
            String raw = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
            String[] parts = raw.split("\\|", 3);
            if (parts.length != 3 || !parts[0].equals(VERSION) || !JobIds.plausible(parts[2])) {
                return null;
            }
            if (parts[1].equals("-")) {
                return new JobStore.Cursor(null, parts[2]);
            }
            String[] t = parts[1].split("\\.", 2);
            Instant at = Instant.ofEpochSecond(Long.parseLong(t[0]), Long.parseLong(t[1]));
            // the database holds nothing outside years 1..9999, and would refuse to compare with it
            if (at.isBefore(Instant.parse("0001-01-01T00:00:00Z")) || at.isAfter(Instant.parse("9999-12-31T23:59:59Z"))) {
                return null;
            }
            return new JobStore.Cursor(at, parts[2]);
        } catch (IllegalArgumentException | java.time.DateTimeException | ArrayIndexOutOfBoundsException e) {
            return null;
        }
    }
}
