package io.gantry.billing.money;

import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.context.event.ShutdownEvent;
import io.micronaut.scheduling.TaskExecutors;
import jakarta.inject.Named;
import jakarta.inject.Singleton;

import java.util.concurrent.ExecutorService;

/**
 * Stops billing's timers ({@code @Scheduled}: budgets, FinOps gauges, invoice issuing) as soon as shutdown begins.
 * Micronaut looks the bean of a scheduled method up at every run; a run falling between the destruction of that bean
 * and the end of shutdown would create it again, and with it a new {@code BillingProcessor} whose consumer nobody
 * closes (it then takes partitions from the next billing instance, in tests the next context in the same JVM).
 */
@Singleton
public class StopTimersOnShutdown implements ApplicationEventListener<ShutdownEvent> {
    private final ExecutorService scheduled;

    public StopTimersOnShutdown(@Named(TaskExecutors.SCHEDULED) ExecutorService scheduled) {
        this.scheduled = scheduled;
    }

    @Override
    public void onApplicationEvent(ShutdownEvent event) {
        scheduled.shutdownNow();
    }
}
