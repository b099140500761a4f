package io.gantry.testkit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlackholeProxyTest {
    /** How long a read waits before the test takes "nothing came" for an answer. */
    private static final int SILENCE_MILLIS = 300;
    /** How long a read waits for bytes that must come. */
    private static final int ANSWER_MILLIS = 10_000;

    private ServerSocket echo;
    private Thread echoThread;
    private BlackholeProxy proxy;

    @BeforeEach
    void startAnEchoServerBehindAProxy() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        echoThread = new Thread(this::echoEachConnection, "echo");
        echoThread.setDaemon(true);
        echoThread.start();
        proxy = BlackholeProxy.start(echo.getLocalPort());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        echo.close();
        echoThread.join(ANSWER_MILLIS);
    }

    @Test
    void bytesPassBothWays() throws IOException {
        try (Socket s = connect()) {
            assertThat(roundTrip(s, "ping")).isEqualTo("ping");
        }
    }

    @Test
    void aBlackholeHoldsEveryByteOfAnOpenConnectionAndHealingDeliversThem() throws IOException {
        try (Socket s = connect()) {
            assertThat(roundTrip(s, "before")).isEqualTo("before");

            proxy.blackhole();
            s.getOutputStream().write("held".getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(SILENCE_MILLIS);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);

            proxy.heal();
            assertThat(read(s, 4)).isEqualTo("held");
        }
    }

    @Test
    void aConnectionOpenedDuringABlackholeIsAcceptedButGoesNoFurtherUntilItHeals() throws IOException {
        proxy.blackhole();
        try (Socket s = connect()) {
            s.getOutputStream().write("new".getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(SILENCE_MILLIS);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);

            proxy.heal();
            assertThat(read(s, 3)).isEqualTo("new");
        }
    }

    @Test
    void aCloseIsHeldBackByABlackholeToo() throws IOException {
        try (Socket s = connect()) {
            assertThat(roundTrip(s, "x")).isEqualTo("x");
            proxy.blackhole();
            s.shutdownOutput(); // the echo server would close its side at once, were it told
            s.setSoTimeout(SILENCE_MILLIS);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);

            proxy.heal();
            s.setSoTimeout(ANSWER_MILLIS);
            assertThat(s.getInputStream().read()).as("end of stream").isEqualTo(-1);
        }
    }

    @Test
    void anUpstreamThatRefusesResetsTheClient() throws Exception {
        echo.close();
        echoThread.join(ANSWER_MILLIS);
        try (Socket s = connect()) {
            s.setSoTimeout(ANSWER_MILLIS);
            assertThatThrownBy(() -> {
                s.getOutputStream().write(1);
                s.getInputStream().read();
            }).isInstanceOf(SocketException.class).hasMessageMatching("(?i).*(reset|broken pipe).*");
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(ANSWER_MILLIS);
        return s;
    }

    private static String roundTrip(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        return read(s, text.length());
    }

    private static String read(Socket s, int n) throws IOException {
        s.setSoTimeout(ANSWER_MILLIS);
        byte[] bytes = s.getInputStream().readNBytes(n);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private void echoEachConnection() {
        while (!echo.isClosed()) {
            try {
                Socket c = echo.accept();
                Thread t = new Thread(() -> {
                    try (c; InputStream in = c.getInputStream(); OutputStream out = c.getOutputStream()) {
                        in.transferTo(out);
                    } catch (IOException ignored) {
                        // the client went away
                    }
                }, "echo-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException closed) {
                return;
            }
        }
    }
}
