package io.gantry.billing.http;

import io.gantry.billing.core.InvalidInput;
import io.gantry.runtime.http.Caller;
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
        return ownTenantOnly(callerTenant, "bills");
    }

    static HttpResponse<?> ownTenantOnly(String callerTenant, String what) {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "tenant: you may only read your own " + what,
                List.of(new Problem.FieldError("tenant", "must be your own tenant (" + callerTenant + ")")));
    }

    /**
     * Whose data a read is about: a tenant reads its own (another tenant named: {@code refused}), an admin the one
     * named or everyone's ({@code tenant} null).
     */
    record Scope(String tenant, HttpResponse<?> refused) {
        static Scope of(Caller caller, String requested, String what) {
            String scope = requested == null || requested.isBlank() ? null : requested;
            if (caller.admin()) {
                return new Scope(scope, null);
            }
            if (scope != null && !scope.equals(caller.tenant())) {
                return new Scope(null, ownTenantOnly(caller.tenant(), what));
            }
            return new Scope(caller.tenant(), null);
        }
    }
}
