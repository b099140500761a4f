package io.gantry.runtime.http;

import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ParentWatchTest {
    @Test
    void actsOnlyOnceTheParentIsGone() throws Exception {
        Process parent = new ProcessBuilder("sleep", "60").start();
        try {
            CountDownLatch gone = new CountDownLatch(1);
            // a handle as a child would hold of its launcher: looked up by pid, not the Process object
            ParentWatch.watch(ProcessHandle.of(parent.pid()), gone::countDown);
            assertThat(gone.await(1, TimeUnit.SECONDS)).as("the parent still runs").isFalse();
            parent.destroyForcibly();
            assertThat(gone.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            parent.destroyForcibly();
        }
    }

    @Test
    void aParentAlreadyGoneActsAtOnce() throws Exception {
        CountDownLatch gone = new CountDownLatch(1);
        ParentWatch.watch(Optional.empty(), gone::countDown);
        assertThat(gone.await(5, TimeUnit.SECONDS)).isTrue();
    }
}
