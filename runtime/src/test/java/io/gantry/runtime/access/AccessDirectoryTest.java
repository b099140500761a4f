package io.gantry.runtime.access;

import io.gantry.runtime.http.Caller;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Which tokens authenticate, given what the access topic said and what the bootstrap file says. */
class AccessDirectoryTest {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    static final String HASH = "ab".repeat(32);
    static final Optional<Caller> NOT_IN_FILE = Optional.empty();

    static AccessDirectory.Grant grant(Instant expires, Instant revoked) {
        return new AccessDirectory.Grant("tok_1", "vision", false, HASH, expires, revoked);
    }

    static Arguments row(String name, Consumer<AccessDirectory> given, Optional<Caller> file, String expected) {
        return Arguments.of(name, given, file, expected);
    }

    static Stream<Arguments> cases() {
        Instant later = NOW.plus(Duration.ofDays(30));
        return Stream.of(
                row("a managed token of an active tenant authenticates as its tenant",
                        d -> { d.tenant("vision", true); d.token(grant(later, null)); }, NOT_IN_FILE, "allowed vision"),
                row("an admin token authenticates as an admin",
                        d -> { d.tenant("vision", true);
                            d.token(new AccessDirectory.Grant("tok_1", "vision", true, HASH, later, null)); },
                        NOT_IN_FILE, "allowed vision admin"),
                row("a token nobody issued is unknown", d -> d.tenant("vision", true), NOT_IN_FILE,
                        "401 unknown API token"),
                row("a revoked token is refused", d -> { d.tenant("vision", true); d.token(grant(later, NOW)); },
                        NOT_IN_FILE, "401 API token tok_1 was revoked"),
                row("a token whose revocation lies ahead still works until then",
                        d -> { d.tenant("vision", true); d.token(grant(later, NOW.plusSeconds(1))); }, NOT_IN_FILE,
                        "allowed vision"),
                row("a token is refused from the instant it expires",
                        d -> { d.tenant("vision", true); d.token(grant(NOW, null)); }, NOT_IN_FILE,
                        "401 API token tok_1 expired at " + NOW),
                row("a token of a disabled tenant is forbidden",
                        d -> { d.tenant("vision", false); d.token(grant(later, null)); }, NOT_IN_FILE,
                        "403 tenant vision is disabled; an admin can enable it again"),
                row("a token whose tenant the view has not seen fails closed", d -> d.token(grant(later, null)),
                        NOT_IN_FILE, "401 unknown API token"),
                row("the newest state of a token wins (revoked after being issued)",
                        d -> { d.tenant("vision", true); d.token(grant(later, null)); d.token(grant(later, NOW)); },
                        NOT_IN_FILE, "401 API token tok_1 was revoked"),
                row("a deleted token no longer authenticates",
                        d -> { d.tenant("vision", true); d.token(grant(later, null)); d.forgetToken("tok_1"); },
                        NOT_IN_FILE, "401 unknown API token"),
                row("a file token works when the topic knows nothing of its tenant", d -> { },
                        Optional.of(new Caller("ops", true)), "allowed ops admin"),
                row("a file token of a disabled tenant is forbidden", d -> d.tenant("ops", false),
                        Optional.of(new Caller("ops", true)), "403 tenant ops is disabled; an admin can enable it again"),
                row("a file token of a tenant enabled again works", d -> { d.tenant("ops", false); d.tenant("ops", true); },
                        Optional.of(new Caller("ops", false)), "allowed ops"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(String name, Consumer<AccessDirectory> given, Optional<Caller> file, String expected) {
        AccessDirectory d = new AccessDirectory();
        given.accept(d);
        assertThat(describe(d.decide(HASH, file, NOW))).isEqualTo(expected);
    }

    static String describe(AccessDirectory.Decision decision) {
        if (decision instanceof AccessDirectory.Allowed a) {
            return "allowed " + a.caller().tenant() + (a.caller().admin() ? " admin" : "");
        }
        AccessDirectory.Refused r = (AccessDirectory.Refused) decision;
        return r.status() + " " + r.detail();
    }
}
