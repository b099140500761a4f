package io.gantry.admission;

import io.micronaut.runtime.Micronaut;

/** Entry point of the admission service. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) {
        Micronaut.build(args).mainClass(Application.class).defaultEnvironments("default").start();
    }
}
