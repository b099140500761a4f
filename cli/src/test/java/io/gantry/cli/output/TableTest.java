package io.gantry.cli.output;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class TableTest {
    @Test
    void columnsAreAlignedAndEmptyCellsShowADash() {
        String t = new Table("JOB ID", "STATE", "WAIT").row("a1", "QUEUED", "QUOTA").row("b-22222", "RUNNING", null)
                .render();
        assertThat(t).isEqualTo("""
                JOB ID    STATE     WAIT
                a1        QUEUED    QUOTA
                b-22222   RUNNING   -
                """);
    }

    @Test
    void aCellWithLineBreaksStaysOnItsRow() {
        String t = new Table("A", "B").row("x\ny", "z").render();
        assertThat(t.lines()).hasSize(2);
        assertThat(t).contains("x y   z");
    }

    @Test
    void durationsAndSizesReadAsPeopleWriteThem() {
        assertThat(Output.duration(Duration.ofSeconds(42))).isEqualTo("42s");
        assertThat(Output.duration(Duration.ofSeconds(192))).isEqualTo("3m12s");
        assertThat(Output.duration(Duration.ofMinutes(125))).isEqualTo("2h05m");
        assertThat(Output.duration(Duration.ofHours(99))).isEqualTo("4d03h");
        assertThat(Output.bytes(524288000)).isEqualTo("500.0 MiB");
        assertThat(Output.age("2026-01-01T00:00:00Z", Instant.parse("2026-01-01T00:01:30Z"))).isEqualTo("1m30s");
        assertThat(Output.age(null, Instant.EPOCH)).isEqualTo("-");
    }

    @Test
    void yamlOutputIsTheSameDataAsJson() throws Exception {
        var node = new ObjectMapper().readTree("{\"jobs\":[{\"jobId\":\"a\",\"attempt\":1,\"waitReason\":null}]}");
        assertThat(Output.yaml(node)).isEqualTo("""
                jobs:
                  - jobId: a
                    attempt: 1
                    waitReason: null
                """);
    }
}
