package io.gantry.placement.backend;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** A piece of a log ends on a whole UTF-8 character, so the next read starts on one. */
class LogChunkTest {

    @Test
    void aReadThatSplitsACharacterLeavesItWholeForTheNextRead() {
        byte[] all = "ab€😀z".getBytes(StandardCharsets.UTF_8); // 1 + 1 + 3 + 4 + 1 bytes
        StringBuilder text = new StringBuilder();
        long offset = 0;
        int guard = 0;
        // read 3 bytes at a time, as a client with a tiny limit would
        while (offset < all.length && guard++ < 20) {
            int n = (int) Math.min(3, all.length - offset);
            byte[] piece = Arrays.copyOfRange(all, (int) offset, (int) offset + n);
            ExecutionBackend.LogChunk c = ExecutionBackend.chunk(piece, n, offset, all.length);
            if (c.nextOffset() == offset) {
                // a character longer than the limit: a client asks for more; here, read it whole
                piece = Arrays.copyOfRange(all, (int) offset, (int) offset + 4);
                c = ExecutionBackend.chunk(piece, 4, offset, all.length);
            }
            text.append(c.text());
            offset = c.nextOffset();
        }
        assertThat(text.toString()).isEqualTo("ab€😀z");
        assertThat(offset).isEqualTo(all.length);
    }

    @Test
    void wholeCharactersAreKeptAndOnlyAnUnfinishedOneIsLeft() {
        byte[] euro = "x€".getBytes(StandardCharsets.UTF_8);
        assertThat(ExecutionBackend.chunk(euro, euro.length, 10, 14)).isEqualTo(new ExecutionBackend.LogChunk(10, 14, 14, "x€"));
        assertThat(ExecutionBackend.chunk(euro, 3, 10, 14)).isEqualTo(new ExecutionBackend.LogChunk(10, 11, 14, "x"));
        assertThat(ExecutionBackend.chunk(new byte[0], 0, 5, 5)).isEqualTo(new ExecutionBackend.LogChunk(5, 5, 5, ""));
    }
}
