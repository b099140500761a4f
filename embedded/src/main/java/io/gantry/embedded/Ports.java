package io.gantry.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.security.SecureRandom;
import java.util.Set;

/** Free ports on 127.0.0.1 for embedded brokers and the services of a stack. */
public final class Ports {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Ports() {
    }

    /**
     * The first of {@code n} consecutive free ports below Linux's ephemeral range (32768-60999), none in
     * {@code taken} (which gets them): no outgoing connection takes one between the check and the bind, and a
     * stopped server's port is still free when it restarts.
     */
    public static int belowEphemeral(int n, Set<Integer> taken) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = 20000 + RANDOM.nextInt(12000);
            boolean free = true;
            for (int p = base; p < base + n && free; p++) {
                free = !taken.contains(p) && bindable(p);
            }
            if (free) {
                for (int p = base; p < base + n; p++) {
                    taken.add(p);
                }
                return base;
            }
        }
        throw new IOException("no " + n + " consecutive free ports between 20000 and 32000");
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
