package io.gantry.admission.http;

import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a job id (and a tenant name in a query) can look like: the read model stores ids of up to 64 characters,
 * and anything else (a NUL, a control character, a thousand bytes) is a bad request, not a database error.
 */
final class JobIds {
    private static final Pattern PLAUSIBLE = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    private JobIds() {
    }

    static boolean plausible(String id) {
        return id != null && PLAUSIBLE.matcher(id).matches();
    }

    static HttpResponse<?> badId(String field, String id) {
        return Problem.badRequest(List.of(new Problem.FieldError(field,
                "is not a job id (1..64 letters, digits or '._:-')")));
    }
}
