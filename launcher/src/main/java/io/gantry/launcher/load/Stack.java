package io.gantry.launcher.load;

import java.util.List;
import java.util.Map;

/** The Gantry under test: one the harness started itself, or one already running somewhere. */
public interface Stack extends AutoCloseable {
    String api();

    /** One bearer token per tenant; submissions go round-robin over them. */
    List<String> tokens();

    String bootstrap();

    /** What a Kafka client of this stack sets besides the bootstrap servers ({@code security.protocol}, sasl, ssl). */
    Map<String, String> kafkaClientSettings();

    /** One line for the report: what runs where. */
    String description();

    /** Adds the processes this stack is made of to the sampler (nothing when they cannot be found). */
    void register(ProcSampler sampler);

    /** Blocks until the stack takes submissions (nodes registered), or throws. */
    void awaitReady() throws Exception;

    @Override
    void close();
}
