package io.gantry.runtime.http;

import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;

/**
 * Ends this service when the process that started it is gone ({@value #PROPERTY}, which {@code gantry dev} sets): a
 * launcher killed with SIGKILL cannot stop its children, and a service left behind would retry its launcher's Kafka
 * for ever and hold its port, so the next {@code gantry dev} could not start. The exit is an orderly one (the shutdown
 * hooks run, for at most 20 s). Services started by anything else (a container, systemd) do not get the property and are not watched.
 */
@Context
@Requires(property = ParentWatch.PROPERTY)
public class ParentWatch {
    public static final String PROPERTY = "gantry.parent-pid";
    private static final long HALT_AFTER_MS = 20_000;
    private static final Logger LOG = LoggerFactory.getLogger(ParentWatch.class);

    public ParentWatch(@Value("${" + PROPERTY + "}") long parentPid) {
        watch(ProcessHandle.of(parentPid), () -> {
            LOG.warn("the process that started this service ({}) is gone: stopping", parentPid);
            // the shutdown hooks close Kafka clients whose broker went with the launcher: bound how long they try
            Thread halt = new Thread(() -> {
                try {
                    Thread.sleep(HALT_AFTER_MS);
                } catch (InterruptedException e) {
                    return;
                }
                Runtime.getRuntime().halt(1);
            }, "parent-gone-halt");
            halt.setDaemon(true);
            halt.start();
            System.exit(0);
        });
    }

    /** Runs {@code gone} once {@code parent} has exited (at once when it is not there any more). */
    static void watch(Optional<ProcessHandle> parent, Runnable gone) {
        if (parent.isEmpty()) {
            new Thread(gone, "parent-gone").start();
            return;
        }
        parent.get().onExit().thenRun(() -> new Thread(gone, "parent-gone").start());
    }
}
