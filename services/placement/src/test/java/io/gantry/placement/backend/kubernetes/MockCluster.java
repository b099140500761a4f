package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * fabric8's mock API server in CRUD mode (plus expectations, for faults), plain HTTP on loopback, and helpers to
 * play the kubelet: nodes with GPUs, pod phases and exit codes. One per test class (each server start costs
 * seconds); tests keep apart by namespace and node names.
 */
public final class MockCluster implements AutoCloseable {
    final KubernetesMockServer server;
    /** The test's own client: plays the kubelet and the administrator. */
    final KubernetesClient admin;

    MockCluster() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        admin = server.createClient();
    }

    /** A client for a backend (closed by it), optionally through {@code proxy}. */
    KubernetesClient client(Proxy proxy) {
        String url = proxy == null ? server.url("/") : "http://127.0.0.1:" + proxy.port() + "/";
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace("default")
                .withRequestTimeout(5_000).withConnectionTimeout(2_000).withWatchReconnectInterval(200)
                .withRequestRetryBackoffLimit(0).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    KubernetesClient client() {
        return client(null);
    }

    Node node(String name, int gpus, boolean ready, Map<String, String> labels) {
        Node node = new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity("96"), "memory", new Quantity("1024Gi"),
                        "nvidia.com/gpu", new Quantity(Integer.toString(gpus))))
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .endStatus().build();
        return admin.nodes().resource(node).createOr(existing -> existing.update());
    }

    void ready(String node, boolean ready) {
        admin.nodes().withName(node).edit(n -> new NodeBuilder(n).editStatus().editFirstCondition()
                .withStatus(ready ? "True" : "False").endCondition().endStatus().build());
    }

    List<Pod> pods(String namespace) {
        return admin.pods().inNamespace(namespace).list().getItems();
    }

    /** What a kubelet reports when the container exited with {@code exitCode}. */
    void finish(String namespace, String pod, int exitCode) {
        Pod p = admin.pods().inNamespace(namespace).withName(pod).get();
        p.setStatus(new PodStatusBuilder().withPhase(exitCode == 0 ? "Succeeded" : "Failed")
                .withContainerStatuses(new ContainerStatusBuilder().withName(GangManifest.CONTAINER).withNewState()
                        .withNewTerminated().withExitCode(exitCode).withReason(exitCode == 0 ? "Completed" : "Error")
                        .endTerminated().endState().build()).build());
        admin.pods().inNamespace(namespace).resource(p).updateStatus();
    }

    /** What a kubelet reports while the container cannot start, e.g. {@code ImagePullBackOff}. */
    void waiting(String namespace, String pod, String reason) {
        Pod p = admin.pods().inNamespace(namespace).withName(pod).get();
        p.setStatus(new PodStatusBuilder().withPhase("Pending")
                .withContainerStatuses(new ContainerStatusBuilder().withName(GangManifest.CONTAINER).withNewState()
                        .withNewWaiting().withReason(reason).withMessage("as the kubelet says").endWaiting().endState()
                        .build()).build());
        admin.pods().inNamespace(namespace).resource(p).updateStatus();
    }

    void running(String namespace, String pod) {
        Pod p = admin.pods().inNamespace(namespace).withName(pod).get();
        p.setStatus(new PodStatusBuilder().withPhase("Running").build());
        admin.pods().inNamespace(namespace).resource(p).updateStatus();
    }

    @Override
    public void close() {
        admin.close();
        destroy(server);
    }

    /**
     * Stops a mock server. fabric8's mock (7.8.0) waits on its Vert.x event loop for a closed watch's sender, which
     * can time out ("Unable to close MockWebServer") when a watch closed with an event in flight; only the test
     * server is affected, so that failure is not the test's.
     */
    public static void destroy(KubernetesMockServer server) {
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            System.err.println("the mock API server did not stop cleanly: " + e.getMessage());
        }
    }

    /**
     * A loopback TCP proxy whose connections can be cut on the client's side, as a network fault would. The server's
     * side of a cut connection stays open and is drained until the server stops: fabric8's mock (7.8.0) stalls every
     * request for up to 30 s when a watch's connection closes while it sends the watch an event (its close handler
     * waits on the event loop for the sender, whose write waits for the event loop), which would fail the tests
     * after this one. A server that has not noticed a broken connection yet is what a real network fault looks like.
     */
    static final class Proxy implements AutoCloseable {
        private final ServerSocket listener;
        /** The client's side of every open connection. */
        private final List<Socket> clientSides = new CopyOnWriteArrayList<>();
        final AtomicInteger accepted = new AtomicInteger();

        Proxy(int targetPort) throws IOException {
            listener = new ServerSocket();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread t = new Thread(() -> {
                while (!listener.isClosed()) {
                    try {
                        Socket client = listener.accept();
                        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        clientSides.add(client);
                        accepted.incrementAndGet();
                        if (listener.isClosed()) {
                            closeQuietly(client);
                        }
                        pump("test-proxy-up", client, server, false);
                        pump("test-proxy-down", server, client, true);
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "test-proxy");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        /**
         * Copies {@code from} to {@code to}. Upstream (client to server) it ends when the client's side ends and
         * leaves the server's side open; downstream it drains what the server sends after the client's side is cut,
         * until the server closes.
         */
        private static void pump(String name, Socket from, Socket to, boolean drain) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[8192];
                boolean writing = true;
                try {
                    InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream();
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        if (writing) {
                            try {
                                out.write(buf, 0, n);
                                out.flush();
                            } catch (IOException e) {
                                if (!drain) {
                                    return;
                                }
                                writing = false;
                            }
                        }
                    }
                } catch (IOException e) {
                    // this side was cut or closed
                } finally {
                    if (drain) {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                }
            }, name);
            t.setDaemon(true);
            t.start();
        }

        /** Cuts every open connection on the client's side; new ones are accepted. */
        void drop() {
            clientSides.forEach(Proxy::closeQuietly);
            clientSides.clear();
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // already closed
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            drop();
        }
    }
}
