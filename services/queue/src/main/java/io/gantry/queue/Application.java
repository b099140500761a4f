package io.gantry.queue;

import io.micronaut.runtime.Micronaut;

/** Entry point of the queue service. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) {
        Micronaut.build(args).mainClass(Application.class).defaultEnvironments("default").start();
    }
}
