package io.gantry.launcher;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 written byte by byte on a loopback socket, so a test can send what a well-behaved client never would:
 * raw NULs and invalid UTF-8 in paths and bodies, a body that lies about its charset, odd header values.
 */
final class RawHttp {
    record Reply(int status, String contentType, String body) {
    }

    private RawHttp() {
    }

    static Reply send(int port, String method, String target, Map<String, String> headers, byte[] body) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(30_000);
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            // ISO-8859-1 keeps each char of the target one byte, so a test can put any byte into the request line
            head.writeBytes((method + " " + target + " HTTP/1.1\r\n").getBytes(StandardCharsets.ISO_8859_1));
            Map<String, String> all = new LinkedHashMap<>();
            all.put("Host", "127.0.0.1:" + port);
            all.put("Connection", "close");
            all.putAll(headers);
            if (body != null) {
                all.put("Content-Length", Integer.toString(body.length));
            }
            all.forEach((k, v) -> head.writeBytes((k + ": " + v + "\r\n").getBytes(StandardCharsets.ISO_8859_1)));
            head.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            OutputStream out = s.getOutputStream();
            try {
                out.write(head.toByteArray());
                if (body != null) {
                    out.write(body);
                }
                out.flush();
            } catch (IOException e) {
                // the server may answer (413) and close before it has read a huge body: read what it said
            }
            return parse(s.getInputStream().readAllBytes());
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + abbreviate(target) + ": " + e, e);
        }
    }

    private static Reply parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8);
        int end = text.indexOf("\r\n\r\n");
        // Netty answers a request line over its limit itself, as HTTP/1.0
        if (!text.startsWith("HTTP/1.") || end < 0) {
            return new Reply(-1, "", abbreviate(text));
        }
        int status = Integer.parseInt(text.substring(9, 12));
        String contentType = "";
        for (String line : text.substring(0, end).split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-type:")) {
                contentType = line.substring("content-type:".length()).trim();
            }
        }
        return new Reply(status, contentType, abbreviate(text.substring(end + 4)));
    }

    static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "...(" + s.length() + " chars)";
    }
}
