package io.gantry.runtime.http;

/**
 * Who is calling: the tenant an API token belongs to, and whether it carries the admin role.
 * Tenants see and touch only their own jobs and usage; admins see everything.
 */
public record Caller(String tenant, boolean admin) {
    /** Request attribute under which {@link TokenAuthFilter} stores the caller. */
    public static final String ATTRIBUTE = "gantry.caller";

    public boolean mayAccess(String ownerTenant) {
        return admin || tenant.equals(ownerTenant);
    }
}
