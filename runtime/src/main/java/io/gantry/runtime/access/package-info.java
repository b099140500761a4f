/**
 * Every service's view of the tenants and API tokens admins manage: {@link io.gantry.runtime.access.AccessView}
 * reads {@code admission.access-events} into an {@link io.gantry.runtime.access.AccessDirectory}, which decides
 * whether a presented token authenticates (with the bootstrap tokens file's answer). Admission decides the changes;
 * this only enforces them.
 */
package io.gantry.runtime.access;
