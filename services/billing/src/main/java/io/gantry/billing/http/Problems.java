package io.gantry.billing.http;

import io.gantry.billing.core.InvalidInput;
import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;

import java.util.List;

/** The answers billing's controllers share. */
final class Problems {
    private Problems() {
    }

    static HttpResponse<?> of(InvalidInput e) {
        return Problem.badRequest(e.fields().stream().map(f -> new Problem.FieldError(f.field(), f.message()))
                .toList());
    }

    static HttpResponse<?> adminOnly(String what) {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", what + " is for admins only",
                List.of(new Problem.FieldError("Authorization", "needs an admin token")));
    }

    static HttpResponse<?> ownTenantOnly(String callerTenant) {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "tenant: you may only read your own bills",
                List.of(new Problem.FieldError("tenant", "must be your own tenant (" + callerTenant + ")")));
    }
}
