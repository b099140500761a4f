package io.gantry.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 in front of one port of this machine, which a test can cut off the way a network partition
 * does. {@link #blackhole()} keeps every connection open but forwards nothing in either direction, not even a close:
 * no byte, no FIN, no RST reaches the other side, so a peer waiting for an answer waits, as it would behind a lost
 * link or a firewall that drops packets (a stopped server, by contrast, is noticed at once: its connections are reset
 * and new ones refused). A connection opened meanwhile is accepted (the kernel completes the handshake) but goes no
 * further. {@link #heal()} forwards again what was held back, as TCP's retransmissions deliver it once a partition
 * ends. Outside a blackhole the proxy passes failures through: the upstream closing a connection closes the client's,
 * and an upstream that refuses a connection resets the client's.
 *
 * <p>Plain {@code java.net}, two daemon threads per connection; everything ends with {@link #close()}.
 */
public final class BlackholeProxy implements AutoCloseable {
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;

    private final ServerSocket server;
    private final int upstreamPort;
    private final ExecutorService threads;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private boolean blackholed; // guarded by gate
    private boolean closed; // guarded by gate

    private BlackholeProxy(ServerSocket server, int upstreamPort) {
        this.server = server;
        this.upstreamPort = upstreamPort;
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "blackhole-proxy-" + server.getLocalPort() + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts a proxy on a free port of 127.0.0.1 that forwards to {@code upstreamPort} of 127.0.0.1. */
    public static BlackholeProxy start(int upstreamPort) {
        try {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            BlackholeProxy proxy = new BlackholeProxy(server, upstreamPort);
            proxy.threads.execute(proxy::acceptLoop);
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** From now on nothing passes, in either direction, on any connection, old or new, until {@link #heal()}. */
    public void blackhole() {
        synchronized (gate) {
            blackholed = true;
        }
    }

    /** Forwards again, starting with what was held back. */
    public void heal() {
        synchronized (gate) {
            blackholed = false;
            gate.notifyAll();
        }
    }

    /** Closes every connection and the listening port, and ends the proxy's threads. */
    @Override
    public void close() {
        synchronized (gate) {
            closed = true;
            gate.notifyAll();
        }
        closeQuietly(server);
        sockets.forEach(BlackholeProxy::closeQuietly);
        threads.shutdownNow();
        try {
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Returns once bytes may pass (at once outside a blackhole), or false when the proxy is closed: every action
     * toward the other side of a connection (bytes, a close, a reset, a new connection upstream) waits here.
     */
    private boolean awaitOpen() {
        synchronized (gate) {
            while (blackholed && !closed) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return !closed;
        }
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            track(client);
            try {
                threads.execute(() -> connect(client));
            } catch (RejectedExecutionException closing) {
                discard(client);
                return;
            }
        }
    }

    private void connect(Socket client) {
        if (!awaitOpen()) {
            discard(client);
            return;
        }
        Socket upstream = new Socket();
        track(upstream);
        try {
            upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort),
                    CONNECT_TIMEOUT_MILLIS);
        } catch (IOException refused) {
            reset(client);
            discard(upstream);
            return;
        }
        AtomicInteger ended = new AtomicInteger();
        try {
            threads.execute(() -> pump(upstream, client, ended));
        } catch (RejectedExecutionException closing) {
            discard(client);
            discard(upstream);
            return;
        }
        pump(client, upstream, ended);
    }

    /**
     * Copies {@code from} to {@code to} until {@code from} ends: its end (FIN) is passed on as a half close, its
     * failure (a reset) as a reset, each only once bytes may pass again. The connection's sockets are closed when both
     * directions have ended ({@code ended} counts them).
     */
    private void pump(Socket from, Socket to, AtomicInteger ended) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (!awaitOpen()) {
                    return;
                }
                out.write(buffer, 0, n);
                out.flush();
            }
            if (awaitOpen()) {
                to.shutdownOutput();
                if (ended.incrementAndGet() == 2) {
                    discard(from);
                    discard(to);
                }
            }
        } catch (IOException e) {
            if (awaitOpen()) {
                reset(to);
                reset(from);
            }
        }
    }

    private void track(Socket s) {
        sockets.add(s);
        synchronized (gate) {
            if (closed) {
                closeQuietly(s);
            }
        }
    }

    private void discard(Socket s) {
        closeQuietly(s);
        sockets.remove(s);
    }

    /** Closes with an RST, as a refused or broken connection does. */
    private void reset(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (SocketException ignored) {
            // already closed
        }
        discard(s);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing is all that is left to do
        }
    }
}
