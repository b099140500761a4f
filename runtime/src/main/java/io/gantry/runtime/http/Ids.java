package io.gantry.runtime.http;

import java.util.regex.Pattern;

/**
 * What an id in a path or a query (a job id, a tenant) may look like before any service looks it up: the stores hold
 * ids of up to 64 characters, and anything else (a NUL, a control character, a thousand bytes) is a bad request, not
 * a database error.
 */
public final class Ids {
    private static final Pattern PLAUSIBLE = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
    /** The rule in words, for problem details. */
    public static final String RULE = "1..64 letters, digits or '._:-'";

    private Ids() {
    }

    public static boolean plausible(String id) {
        return id != null && PLAUSIBLE.matcher(id).matches();
    }
}
