package io.gantry.billing.core;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A released allocation: the whole held interval and what was held, everything rating needs.
 *
 * @param reason why it was released (the wire enum's name, e.g. {@code NODE_FAILED}); decides credits
 */
public record Release(String tenant, String jobId, int attempt, String allocationId, Instant grantedAt,
                      Instant releasedAt, List<Placement> placements, String reason) {
    /** Without a release reason (never credited). */
    public Release(String tenant, String jobId, int attempt, String allocationId, Instant grantedAt,
                   Instant releasedAt, List<Placement> placements) {
        this(tenant, jobId, attempt, allocationId, grantedAt, releasedAt, placements, null);
    }

    public Release {
        requireText(tenant, "tenant");
        requireText(jobId, "jobId");
        requireText(allocationId, "allocationId");
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        }
        Objects.requireNonNull(grantedAt, "grantedAt");
        Objects.requireNonNull(releasedAt, "releasedAt");
        if (releasedAt.isBefore(grantedAt)) {
            throw new IllegalArgumentException("releasedAt " + releasedAt + " is before grantedAt " + grantedAt);
        }
        placements = List.copyOf(Objects.requireNonNull(placements, "placements"));
    }

    private static void requireText(String value, String field) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank");
        }
    }
}
