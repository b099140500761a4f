package io.gantry.runtime.http;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TokenStoreTest {
    static final String FILE = """
            tokens:
              - tenant: vision
                token: vision-secret-1
              - tenant: nlp
                sha256: %s
              - tenant: ops
                role: admin
                token: ops-secret-123
            """.formatted(HexFormat.of().formatHex(TokenStore.sha256("nlp-secret-22")));

    @Test
    void aTokenIdentifiesItsTenantAndRole() {
        TokenStore store = TokenStore.parse(FILE);
        assertThat(store.authenticate("vision-secret-1")).contains(new Caller("vision", false));
        assertThat(store.authenticate("nlp-secret-22")).contains(new Caller("nlp", false));
        assertThat(store.authenticate("ops-secret-123")).contains(new Caller("ops", true));
    }

    @Test
    void unknownOrMissingTokensAreRefused() {
        TokenStore store = TokenStore.parse(FILE);
        assertThat(store.authenticate("vision-secret-2")).isEmpty();
        assertThat(store.authenticate("")).isEmpty();
        assertThat(store.authenticate(null)).isEmpty();
    }

    @Test
    void aTenantMayAccessOnlyItsOwnThingsAndAnAdminEverything() {
        assertThat(new Caller("vision", false).mayAccess("vision")).isTrue();
        assertThat(new Caller("vision", false).mayAccess("nlp")).isFalse();
        assertThat(new Caller("ops", true).mayAccess("nlp")).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "no tokens list            | tenants: []                                            | tokens:",
            "tenant with upper case    | 'tokens: [{tenant: Vision, token: abcdefgh12}]'       | tenant",
            "unknown role              | 'tokens: [{tenant: a, role: root, token: abcdefgh12}]' | role",
            "token too short           | 'tokens: [{tenant: a, token: short}]'                  | at least 8",
    })
    void aBrokenTokensFileIsRejectedWithTheReason(String name, String yaml, String reason) {
        assertThatThrownBy(() -> TokenStore.parse(yaml)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }
}
