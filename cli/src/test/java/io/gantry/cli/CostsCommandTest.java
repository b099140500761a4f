package io.gantry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Billing's costs of a window as a person reads them. */
class CostsCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void eachLineShowsWhatItIsItsPriceAndAmountThenTheTotalOfTheWindow() throws Exception {
        String out = CostsCommand.text(JSON.readTree("""
                {"from":"2026-10-31T23:00:00Z","to":"2026-11-30T23:00:00Z","currency":"EUR","priceBookVersion":4,
                 "lines":[{"tenant":"vision","jobId":"j1","gpuModel":"H100","component":"GPU","kind":"USAGE",
                   "reason":null,"quantity":"7200.000","quantityUnit":"GPU-seconds","quantityExact":7200000,
                   "unitPrice":"2.90","priceUnit":"GPU-hour","amount":"5.80","migProfile":null},
                  {"tenant":"vision","jobId":"j1","gpuModel":"H100","component":"GPU","kind":"CREDIT",
                   "reason":"NODE_FAILED","quantity":"-600.000","quantityUnit":"GPU-seconds","quantityExact":-600000,
                   "unitPrice":"2.90","priceUnit":"GPU-hour","amount":"-0.48","migProfile":null}],
                 "total":"5.32"}"""));

        assertThat(out).contains("GPU H100", "7200.000 GPU-seconds", "2.90 / GPU-hour", "5.80",
                "GPU H100 credit (NODE_FAILED)", "-0.48")
                .endsWith("total 5.32 EUR (2026-10-31T23:00:00Z to 2026-11-30T23:00:00Z, price book version 4)\n");
        assertThat(CostsCommand.text(JSON.readTree("{\"from\":null,\"to\":null,\"currency\":\"EUR\","
                + "\"priceBookVersion\":0,\"lines\":[],\"total\":\"0.00\"}")))
                .isEqualTo("no costs\ntotal 0.00 EUR (the beginning to now, price book version 0)\n");
    }
}
