package io.gantry.billing;

import io.micronaut.runtime.Micronaut;

/** Entry point of the billing service. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) {
        Micronaut.build(args).mainClass(Application.class).defaultEnvironments("default").start();
    }
}
