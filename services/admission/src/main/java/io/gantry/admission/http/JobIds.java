package io.gantry.admission.http;

import io.gantry.runtime.http.Ids;
import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;

import java.util.List;

/**
 * What a job id (and a tenant name in a query) can look like: the read model stores ids of up to 64 characters,
 * and anything else (a NUL, a control character, a thousand bytes) is a bad request, not a database error.
 */
final class JobIds {
    private JobIds() {
    }

    static boolean plausible(String id) {
        return Ids.plausible(id);
    }

    static HttpResponse<?> badId(String field, String id) {
        return Problem.badRequest(List.of(new Problem.FieldError(field,
                "is not a job id (" + Ids.RULE + ")")));
    }
}
