package io.gantry.billing.money;

import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;

import java.time.Clock;

/** The wall clock, as a bean so tests can replace it. */
@Factory
public class ClockFactory {
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }
}
