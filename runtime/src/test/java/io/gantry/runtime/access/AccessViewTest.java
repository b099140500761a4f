package io.gantry.runtime.access;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AccessEvent;
import io.gantry.events.AccessRole;
import io.gantry.events.TenantChanged;
import io.gantry.events.TenantState;
import io.gantry.events.TokenChanged;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The view every service keeps of {@code admission.access-events}, against the real broker. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessViewTest {
    static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    final String tenant = "t" + UUID.randomUUID().toString().substring(0, 8);
    final String tokenId = "tok_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    final String hash = UUID.randomUUID().toString().replace("-", "").repeat(2);

    TopicClient topic;
    AccessView view;

    @BeforeAll
    void start() throws InterruptedException {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        topic = new TopicClient(bootstrap);
        // written before the view starts: it must find them by reading the topic from its beginning
        tenant(TenantState.ACTIVE);
        token(NOW.plus(Duration.ofDays(1)), null);
        view = new AccessView(bootstrap, "test", io.gantry.runtime.kafka.KafkaSecurity.NONE);
        assertThat(view.awaitCaughtUp(Duration.ofSeconds(30))).isTrue();
    }

    @AfterAll
    void stop() {
        view.close();
        topic.close();
    }

    @Test
    void aTokenIssuedBeforeTheViewStartedAuthenticatesThenStopsOnceRevokedOrItsTenantIsDisabled() {
        assertThat(decide(NOW)).isEqualTo(new AccessDirectory.Allowed(new Caller(tenant, false)));
        assertThat(decide(NOW.plus(Duration.ofDays(1)))).as("at its expiry")
                .isEqualTo(new AccessDirectory.Refused(401, "API token " + tokenId + " expired at "
                        + NOW.plus(Duration.ofDays(1))));

        tenant(TenantState.DISABLED);
        await().atMost(Duration.ofSeconds(10)).until(() -> decide(NOW) instanceof AccessDirectory.Refused r
                && r.status() == 403);
        assertThat(view.directory().decide("00", Optional.of(new Caller(tenant, true)), NOW))
                .as("a bootstrap-file token of the disabled tenant").isInstanceOf(AccessDirectory.Refused.class);

        tenant(TenantState.ACTIVE);
        await().atMost(Duration.ofSeconds(10)).until(() -> decide(NOW) instanceof AccessDirectory.Allowed);

        token(NOW.plus(Duration.ofDays(1)), NOW);
        await().atMost(Duration.ofSeconds(10)).until(() -> decide(NOW)
                .equals(new AccessDirectory.Refused(401, "API token " + tokenId + " was revoked")));
    }

    private AccessDirectory.Decision decide(Instant at) {
        return view.directory().decide(hash, Optional.empty(), at);
    }

    private void tenant(TenantState state) {
        topic.send(Topics.ADMISSION_ACCESS_EVENTS, tenant, AccessEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setSubject(tenant).setOccurredAt(Instant.now())
                .setPayload(TenantChanged.newBuilder().setTenant(tenant).setDisplayName(null).setState(state)
                        .setCreatedAt(NOW).setChangedBy("ops").build())
                .build());
    }

    private void token(Instant expires, Instant revoked) {
        topic.send(Topics.ADMISSION_ACCESS_EVENTS, tokenId, AccessEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setSubject(tokenId).setOccurredAt(Instant.now())
                .setPayload(TokenChanged.newBuilder().setTokenId(tokenId).setTenant(tenant).setRole(AccessRole.TENANT)
                        .setSha256(hash).setLabel(null).setCreatedAt(NOW).setExpiresAt(expires).setRevokedAt(revoked)
                        .setReplacedBy(null).build())
                .build());
    }
}
