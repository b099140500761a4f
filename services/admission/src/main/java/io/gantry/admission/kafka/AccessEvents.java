package io.gantry.admission.kafka;

import io.gantry.admission.core.Access;
import io.gantry.events.AccessEvent;
import io.gantry.events.AccessRole;
import io.gantry.events.TenantChanged;
import io.gantry.events.TenantState;
import io.gantry.events.TokenChanged;

import java.time.Instant;
import java.util.UUID;

/** Core tenants and tokens to the records of {@code admission.access-events} (the hash of a secret, never one). */
public final class AccessEvents {
    private AccessEvents() {
    }

    public static AccessEvent of(Access.Tenant t, String changedBy, Instant now) {
        return AccessEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString())
                .setSubject(t.name())
                .setOccurredAt(now)
                .setPayload(TenantChanged.newBuilder()
                        .setTenant(t.name())
                        .setDisplayName(t.displayName())
                        .setState(t.state() == Access.TenantState.ACTIVE ? TenantState.ACTIVE : TenantState.DISABLED)
                        .setCreatedAt(t.createdAt())
                        .setChangedBy(changedBy)
                        .build())
                .build();
    }

    public static AccessEvent of(Access.Token t, Instant now) {
        return AccessEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString())
                .setSubject(t.tokenId())
                .setOccurredAt(now)
                .setPayload(TokenChanged.newBuilder()
                        .setTokenId(t.tokenId())
                        .setTenant(t.tenant())
                        .setRole(t.role() == Access.Role.ADMIN ? AccessRole.ADMIN : AccessRole.TENANT)
                        .setSha256(t.sha256())
                        .setLabel(t.label())
                        .setCreatedAt(t.createdAt())
                        .setExpiresAt(t.expiresAt())
                        .setRevokedAt(t.revokedAt())
                        .setReplacedBy(t.replacedBy())
                        .build())
                .build();
    }
}
