package io.gantry.recovery.core;

import java.time.Instant;

/**
 * What recovery knows about one node.
 *
 * @param lastSeenAt      start of the current silence on recovery's clock: the last sign of life, or the restart
 *                        time (grace period); {@code null} if the node is only known from before a restart and the
 *                        grace period has not started yet
 * @param lastHeartbeatAt when the last registration or heartbeat was received, if this process (or the failure
 *                        it restored) saw one
 * @param failedAt        when it was declared failed; {@code null} while healthy
 */
public record NodeHealth(String nodeId, NodeState state, Instant lastSeenAt, Instant lastHeartbeatAt,
                         Instant failedAt) {
}
