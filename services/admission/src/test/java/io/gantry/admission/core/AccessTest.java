package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Tenant and token administration: what a request may ask for, and what each change makes of the state. */
class AccessTest {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    static final Access.Tenant ACTIVE = new Access.Tenant("vision", null, Access.TenantState.ACTIVE, NOW.minusSeconds(60));
    static final Access.Tenant DISABLED = new Access.Tenant("vision", null, Access.TenantState.DISABLED,
            NOW.minusSeconds(60));
    static final Access.Token TOKEN = new Access.Token("tok_" + "a".repeat(24), "vision", Access.Role.TENANT,
            "ab".repeat(32), "ci", NOW.minus(Duration.ofDays(10)), NOW.plus(Duration.ofDays(20)), null, null);

    static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static Stream<Arguments> badIssueRequests() {
        return Stream.of(
                Arguments.of("an unknown role", body("role", "root"), "role", "must be tenant or admin"),
                Arguments.of("an expiry in the past", body("expiresAt", "2026-02-01T00:00:00Z"), "expiresAt",
                        "must be in the future and at most 365 days from now"),
                Arguments.of("an expiry over a year away", body("expiresIn", "P366D"), "expiresIn",
                        "must be more than zero and at most 365 days (P365D)"),
                Arguments.of("a zero lifetime", body("expiresIn", "PT0S"), "expiresIn",
                        "must be more than zero and at most 365 days (P365D)"),
                Arguments.of("a lifetime that is not a duration", body("expiresIn", "30 days"), "expiresIn",
                        "must be an ISO-8601 duration such as P30D or PT1H"),
                Arguments.of("both forms of expiry", body("expiresIn", "P1D", "expiresAt", "2026-03-05T00:00:00Z"),
                        "expiresAt", "give expiresIn or expiresAt, not both"),
                Arguments.of("a label with a control character", body("label", "ci\u0007"), "label",
                        "must not contain control character U+0007"),
                Arguments.of("an unknown field", body("secret", "mine"), "secret", "unknown field"));
    }

    @ParameterizedTest(name = "an issue request with {0} is refused naming the field")
    @MethodSource("badIssueRequests")
    void badIssueRequestsAreRefusedNamingTheField(String name, Map<String, Object> body, String field, String message) {
        Access.Parsed<Access.Issue> parsed = Access.issue(body, NOW);
        assertThat(parsed.isValid()).isFalse();
        assertThat(parsed.errors()).contains(new FieldError(field, message));
    }

    @Test
    void anIssueRequestWithoutABodyGetsATenantTokenForNinetyDays() {
        assertThat(Access.issue(null, NOW).value())
                .isEqualTo(new Access.Issue(Access.Role.TENANT, null, NOW.plus(Duration.ofDays(90))));
        assertThat(Access.issue(body("role", "admin", "label", "ops laptop", "expiresIn", "p30d"), NOW).value())
                .isEqualTo(new Access.Issue(Access.Role.ADMIN, "ops laptop", NOW.plus(Duration.ofDays(30))));
    }

    static Stream<Arguments> badTenantRequests() {
        return Stream.of(
                Arguments.of("no name", body(), "name", "is required"),
                Arguments.of("an upper-case name", body("name", "Vision"), "name",
                        "must be 1..63 lower-case letters, digits or '-', starting with a letter or digit"),
                Arguments.of("an underscore (kept for token ids)", body("name", "a_b"), "name",
                        "must be 1..63 lower-case letters, digits or '-', starting with a letter or digit"),
                Arguments.of("a blank display name", body("name", "a", "displayName", " "), "displayName",
                        "must not be blank"));
    }

    @ParameterizedTest(name = "a tenant request with {0} is refused naming the field")
    @MethodSource("badTenantRequests")
    void badTenantRequestsAreRefusedNamingTheField(String name, Map<String, Object> body, String field,
                                                   String message) {
        assertThat(Access.newTenant(body).errors()).contains(new FieldError(field, message));
    }

    @Test
    void aTenantIsCreatedActiveOnceAndASecondCreateIsAConflict() {
        Access.NewTenant request = new Access.NewTenant("vision", "Vision team");
        assertThat(Access.create(Optional.empty(), request, NOW).value())
                .isEqualTo(new Access.Tenant("vision", "Vision team", Access.TenantState.ACTIVE, NOW));
        assertThat(Access.create(Optional.of(ACTIVE), request, NOW).refusal()).isEqualTo(Access.Refusal.CONFLICT);
        Access.Outcome<Access.Tenant> fromFile = Access.create(Optional.empty(), request, true, NOW);
        assertThat(fromFile.refusal()).as("a tenant of the tokens file exists too").isEqualTo(Access.Refusal.CONFLICT);
        assertThat(fromFile.message()).contains("tenant vision already exists (in the tokens file");
    }

    @Test
    void anAdminCannotDisableItsOwnTenantButAnotherOneAndAnUnknownOneIsNotFound() {
        assertThat(Access.setState(Optional.of(ACTIVE), "vision", Access.TenantState.DISABLED, "vision").refusal())
                .isEqualTo(Access.Refusal.CONFLICT);
        assertThat(Access.setState(Optional.of(ACTIVE), "vision", Access.TenantState.DISABLED, "ops").value().state())
                .isEqualTo(Access.TenantState.DISABLED);
        assertThat(Access.setState(Optional.empty(), "nobody", Access.TenantState.ACTIVE, "ops").refusal())
                .isEqualTo(Access.Refusal.NOT_FOUND);
    }

    @Test
    void aTenantOnlyTheTokensFileNamesGetsItsRecordWhenItsStateIsSetButNotWhenItIsTheCallers() {
        assertThat(Access.setState(Optional.empty(), "demo", Access.TenantState.DISABLED, "ops", true, NOW).value())
                .isEqualTo(new Access.Tenant("demo", "demo", Access.TenantState.DISABLED, NOW));
        assertThat(Access.setState(Optional.empty(), "ops", Access.TenantState.DISABLED, "ops", true, NOW).refusal())
                .isEqualTo(Access.Refusal.CONFLICT);
        assertThat(Access.setState(Optional.empty(), "demo", Access.TenantState.DISABLED, "ops", false, NOW)
                .refusal()).as("not in the file").isEqualTo(Access.Refusal.NOT_FOUND);
        assertThat(Access.setState(Optional.of(ACTIVE), "vision", Access.TenantState.DISABLED, "ops", true, NOW)
                .value().createdAt()).as("a record that exists keeps its own").isEqualTo(ACTIVE.createdAt());
    }

    @Test
    void aDisabledOrUnknownTenantGetsNoToken() {
        Access.Issue request = new Access.Issue(Access.Role.TENANT, null, NOW.plusSeconds(60));
        assertThat(Access.issue(Optional.of(DISABLED), "vision", false, request, "tok_x", "h", NOW).refusal())
                .isEqualTo(Access.Refusal.CONFLICT);
        assertThat(Access.issue(Optional.of(DISABLED), "vision", true, request, "tok_x", "h", NOW).refusal())
                .as("disabled, though in the tokens file").isEqualTo(Access.Refusal.CONFLICT);
        assertThat(Access.issue(Optional.empty(), "vision", false, request, "tok_x", "h", NOW).refusal())
                .isEqualTo(Access.Refusal.NOT_FOUND);
        Access.Token token = new Access.Token("tok_x", "vision", Access.Role.TENANT, "h", null, NOW,
                NOW.plusSeconds(60), null, null);
        assertThat(Access.issue(Optional.of(ACTIVE), "vision", false, request, "tok_x", "h", NOW).value())
                .isEqualTo(new Access.Issued(token, null));
    }

    @Test
    void aTenantOfTheTokensFileGetsItsRecordWithItsFirstApiToken() {
        Access.Issue request = new Access.Issue(Access.Role.TENANT, null, NOW.plusSeconds(60));
        Access.Issued issued = Access.issue(Optional.empty(), "vision", true, request, "tok_x", "h", NOW).value();
        assertThat(issued.newTenant()).isEqualTo(new Access.Tenant("vision", "vision", Access.TenantState.ACTIVE, NOW));
        assertThat(issued.token().tenant()).isEqualTo("vision");
        assertThat(Access.issue(Optional.of(ACTIVE), "vision", true, request, "tok_x", "h", NOW).value().newTenant())
                .as("a record that exists is kept").isNull();
    }

    @Test
    void revokingTwiceKeepsTheFirstRevocationTime() {
        Access.Token revoked = Access.revoke(Optional.of(TOKEN), TOKEN.tokenId(), NOW).value();
        assertThat(revoked.revokedAt()).isEqualTo(NOW);
        assertThat(revoked.stateAt(NOW)).isEqualTo("revoked");
        assertThat(Access.revoke(Optional.of(revoked), TOKEN.tokenId(), NOW.plusSeconds(5)).value()).isEqualTo(revoked);
    }

    static Stream<Arguments> rotations() {
        return Stream.of(
                Arguments.of("without an overlap the old token is revoked at once", Duration.ZERO,
                        TOKEN.expiresAt(), NOW),
                Arguments.of("with an overlap the old token expires at its end", Duration.ofHours(1),
                        NOW.plus(Duration.ofHours(1)), null),
                Arguments.of("an overlap past the old expiry does not extend it", Duration.ofDays(7),
                        NOW.plus(Duration.ofDays(7)), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rotations")
    void aRotationIssuesASuccessorWithTheSameTenantRoleAndLabel(String name, Duration overlap, Instant oldExpiry,
                                                                Instant oldRevoked) {
        Access.Rotation r = Access.rotate(Optional.of(TOKEN), Optional.of(ACTIVE), TOKEN.tokenId(), overlap,
                "tok_new", "cd", NOW).value();
        assertThat(r.issued()).isEqualTo(new Access.Token("tok_new", "vision", Access.Role.TENANT, "cd", "ci", NOW,
                NOW.plus(Duration.ofDays(30)), null, null));
        assertThat(r.replaced().expiresAt()).isEqualTo(oldExpiry);
        assertThat(r.replaced().revokedAt()).isEqualTo(oldRevoked);
        assertThat(r.replaced().replacedBy()).isEqualTo("tok_new");
    }

    @Test
    void aRevokedExpiredOrAlreadyRotatedTokenCannotBeRotated() {
        Access.Token revoked = Access.revoke(Optional.of(TOKEN), TOKEN.tokenId(), NOW).value();
        Access.Token rotated = Access.rotate(Optional.of(TOKEN), Optional.of(ACTIVE), TOKEN.tokenId(),
                Duration.ofHours(1), "tok_new", "cd", NOW).value().replaced();
        for (Access.Token t : List.of(revoked, rotated)) {
            assertThat(Access.rotate(Optional.of(t), Optional.of(ACTIVE), t.tokenId(), Duration.ZERO, "tok_n", "e",
                    NOW).refusal()).isEqualTo(Access.Refusal.CONFLICT);
        }
        assertThat(Access.rotate(Optional.of(TOKEN), Optional.of(ACTIVE), TOKEN.tokenId(), Duration.ZERO, "tok_n",
                "e", TOKEN.expiresAt()).message()).contains("is expired");
        assertThat(Access.rotate(Optional.of(TOKEN), Optional.of(DISABLED), TOKEN.tokenId(), Duration.ZERO, "tok_n",
                "e", NOW).refusal()).isEqualTo(Access.Refusal.CONFLICT);
    }

    @Test
    void anOverlapIsAnIsoDurationOfAtMostSevenDays() {
        assertThat(Access.overlap(null).value()).isEqualTo(Duration.ZERO);
        assertThat(Access.overlap("PT1H").value()).isEqualTo(Duration.ofHours(1));
        assertThat(Access.overlap("P8D").errors()).containsExactly(new FieldError("overlap", "must be from PT0S to P7D"));
        assertThat(Access.overlap("1h").errors()).extracting(FieldError::field).containsExactly("overlap");
    }
}
