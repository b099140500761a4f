package io.gantry.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WindowOptionsTest {
    private static WindowOptions parsed(Object command, String... args) {
        new CommandLine(command).parseArgs(args);
        return command instanceof UsageCommand u ? u.window : ((CostsCommand) command).window;
    }

    @Test
    void usageAndCostsTakeTheSameWindowAndTenantAndSendDatesAsWritten() {
        String[] args = {"--from", "2026-11-01", "--to", "2026-11-15T12:00:00Z", "-t", "team a"};
        assertThat(parsed(new UsageCommand(), args).query("/v1/usage", null))
                .isEqualTo("/v1/usage?from=2026-11-01&to=2026-11-15T12%3A00%3A00Z&tenant=team+a");
        assertThat(parsed(new CostsCommand(), args).query("/v1/costs", null))
                .isEqualTo("/v1/costs?from=2026-11-01&to=2026-11-15T12%3A00%3A00Z&tenant=team+a");
    }

    @Test
    void aLeadingParameterComesFirstAndNothingGivenAddsNothing() {
        WindowOptions none = parsed(new CostsCommand());
        assertThat(none.bounded()).isFalse();
        assertThat(none.query("/v1/costs", "month=2026-11")).isEqualTo("/v1/costs?month=2026-11");
        assertThat(none.query("/v1/usage", null)).isEqualTo("/v1/usage");
        assertThat(parsed(new CostsCommand(), "--tenant", "b").query("/v1/costs", "month=2026-10"))
                .isEqualTo("/v1/costs?month=2026-10&tenant=b");
    }

    @Test
    void aWindowThatIsNoDateIsRefusedNamingTheOption() {
        WindowOptions w = parsed(new UsageCommand(), "--to", "yesterday");
        assertThat(w.bounded()).isTrue();
        assertThatThrownBy(() -> w.query("/v1/usage", null)).isInstanceOf(CliException.class)
                .hasMessageContaining("--to must be a date");
    }
}
