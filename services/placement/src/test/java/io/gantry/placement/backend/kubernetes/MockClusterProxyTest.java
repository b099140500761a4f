package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The test proxy cuts watches without stalling the mock API server for the tests that follow. */
class MockClusterProxyTest {
    private static MockCluster cluster;

    @BeforeAll
    static void startServer() {
        cluster = new MockCluster();
    }

    @AfterAll
    static void stopServer() {
        cluster.close();
    }

    @Test
    void cuttingWatchesWhileTheServerSendsThemEventsLeavesTheServerAnswering() throws Exception {
        try (MockCluster.Proxy proxy = new MockCluster.Proxy(cluster.server.getPort())) {
            KubernetesClient client = cluster.client(proxy);
            AtomicInteger events = new AtomicInteger();
            for (int w = 0; w < 5; w++) {
                client.nodes().watch(new Watcher<Node>() {
                    @Override
                    public void eventReceived(Action action, Node node) {
                        events.incrementAndGet();
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                        // a cut watch reconnects
                    }
                });
            }
            for (int round = 0; round < 10; round++) {
                int r = round;
                int before = proxy.accepted.get();
                // cut right after a different one of the round's nodes each time: its events are still being sent
                for (int n = 0; n < 5; n++) {
                    cluster.node("cut-" + r + "-" + n, 8, true, Map.of());
                    if (n == r % 5) {
                        proxy.drop();
                    }
                }

                long started = System.nanoTime();
                assertThat(cluster.admin.nodes().list().getItems()).hasSize(5 * (round + 1));
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
                // the cut watches are back before the next round's events
                await().atMost(Duration.ofSeconds(10)).until(() -> proxy.accepted.get() >= before + 5);
            }
            int seen = events.get();
            cluster.node("after-the-cuts", 8, true, Map.of());
            await().atMost(Duration.ofSeconds(10)).until(() -> events.get() >= seen + 5);
            client.close();
        }
    }
}
