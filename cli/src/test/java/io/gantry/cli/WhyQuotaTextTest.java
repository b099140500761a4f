package io.gantry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The queue's quota lines of `gantry why`. */
class WhyQuotaTextTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aQueueWithoutACohortNeitherBorrowsNorLendsAndACohortsLimitsAreShown() throws Exception {
        String alone = """
                {"name":"demo","tenant":"demo","cohort":null,"reservedGpus":4,"quotaGpus":32,"pending":1,"parked":0,
                 "dispatched":1,"flavours":[{"flavour":"H100","used":4,"nominal":32,"borrowed":0,"lent":0,
                 "borrowingLimit":null,"lendingLimit":null}]}""";
        assertThat(WhyCommand.quota(JSON.readTree(alone)).get(1)).endsWith("lent; no cohort: neither borrows nor lends");

        String shared = alone.replace("\"cohort\":null", "\"cohort\":\"lab\"").replace("\"borrowingLimit\":null",
                "\"borrowingLimit\":4");
        assertThat(WhyCommand.quota(JSON.readTree(shared)).get(1)).endsWith("may borrow 4, may lend without limit");
    }
}
