package io.gantry.admission.http;

import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;

import java.time.Clock;

/** The service's clock for event times; tests may replace it. */
@Factory
public class ClockFactory {
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }
}
