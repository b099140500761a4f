package io.gantry.placement.backend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Checkpoint reports for tasks that prefer writing a file to calling the API: a task writes
 * {@value #MARKER} into its job's checkpoint directory ({@code GANTRY_CHECKPOINT_DIR}), holding the same JSON the
 * API takes ({@code {"step": 1200, "path": "/ckpt/step-1200.pt", "sizeBytes": ..., "saveSeconds": ...}}), written
 * to a temporary name and renamed into place once the checkpoint itself is complete. Every {@link #scan} (the
 * backend's poll) looks at each watched run's marker; a marker whose content changed is posted to
 * {@code POST /v1/jobs/{id}/checkpoints} with the run's own token, exactly as the Python helper does, so admission
 * stays the one writer of checkpoint facts and applies the same checks (a stale attempt, another job's token: 4xx).
 *
 * <p>Posting is asynchronous, one request in flight per run: the loop thread never waits for the API. A 503 (the run
 * not yet known to admission) or an unreachable API is tried again after {@link #RETRY_AFTER}; a refusal (4xx) is
 * logged once and that marker content is not sent again. Tokens are never logged.
 */
final class CheckpointMarkers {
    static final String MARKER = "gantry-checkpoint.json";
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);
    /** A marker is a few fields of JSON: anything larger is not one and is refused without reading it whole. */
    static final int MAX_BYTES = 16 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointMarkers.class);

    private final String apiUrl;
    private final HttpClient http;
    private final Map<String, Watched> watched = new ConcurrentHashMap<>();

    private static final class Watched {
        final String jobId;
        final Path marker;
        final String runToken;
        /** The content last accepted or refused (not sent again); the content of the request in flight. */
        byte[] done;
        byte[] inFlight;
        Instant notBefore = Instant.MIN;

        Watched(String jobId, Path marker, String runToken) {
            this.jobId = jobId;
            this.marker = marker;
            this.runToken = runToken;
        }
    }

    CheckpointMarkers(String apiUrl) {
        this.apiUrl = apiUrl.endsWith("/") ? apiUrl.substring(0, apiUrl.length() - 1) : apiUrl;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** Starts watching a run's checkpoint directory; a marker already there (a previous attempt's) is not sent. */
    void watch(String allocationId, String jobId, Path checkpointDir, String runToken) {
        Watched w = new Watched(jobId, checkpointDir.resolve(MARKER), runToken);
        w.done = read(w.marker);
        watched.put(allocationId, w);
    }

    /**
     * Stops watching a run that ended, after one last look: a task that saved on SIGTERM and exited right away has
     * its checkpoint reported (admission counts one committed within the grace period).
     */
    void finish(String allocationId, Instant now) {
        Watched w = watched.remove(allocationId);
        if (w != null) {
            send(allocationId, w, now, true);
        }
    }

    /** Sends each changed marker once (asynchronously). */
    void scan(Instant now) {
        watched.forEach((allocationId, w) -> send(allocationId, w, now, false));
    }

    private void send(String allocationId, Watched w, Instant now, boolean last) {
        synchronized (w) {
            if (w.inFlight != null || !last && now.isBefore(w.notBefore)) {
                return;
            }
            byte[] content = read(w.marker);
            if (content == null || Arrays.equals(content, w.done)) {
                return;
            }
            w.inFlight = content;
            post(allocationId, w, content, now);
        }
    }

    private void post(String allocationId, Watched w, byte[] content, Instant now) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(apiUrl + "/v1/jobs/" + w.jobId + "/checkpoints"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + w.runToken)
                .POST(HttpRequest.BodyPublishers.ofByteArray(content))
                .build();
        http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((response, error) -> {
            synchronized (w) {
                w.inFlight = null;
                if (error != null || response.statusCode() == 503 || response.statusCode() >= 500) {
                    // not yet known to admission, or the API is away: the same content is tried again
                    w.notBefore = now.plus(RETRY_AFTER);
                    LOG.debug("checkpoint marker of {} not delivered yet: {}", w.jobId,
                            error != null ? error.toString() : "HTTP " + response.statusCode());
                    return;
                }
                w.done = content;
                if (response.statusCode() >= 400) {
                    // the fields only: the API's sentence may quote the marker, which a task may have pointed at
                    // a file only placement can read
                    LOG.warn("checkpoint marker {} of job {} refused (HTTP {}, fields {})", w.marker, w.jobId,
                            response.statusCode(), refusedFields(response.body()));
                } else {
                    LOG.info("checkpoint marker of job {} reported ({})", w.jobId, allocationId);
                }
            }
        });
    }

    /** The field names of a problem+json refusal ({@code errors[].field}), never its text. */
    static java.util.List<String> refusedFields(String body) {
        java.util.List<String> fields = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"field\"\\s*:\\s*\"([A-Za-z0-9_.\\[\\]-]{1,64})\"")
                .matcher(body == null ? "" : body);
        while (m.find() && fields.size() < 8) {
            fields.add(m.group(1));
        }
        return fields;
    }

    /**
     * The marker's bytes, or null when there is none (or it cannot be read, or is too large to be one). Placement
     * may run as root while the directory belongs to a task: a symbolic link is never followed (checked, then
     * opened with {@code O_NOFOLLOW}), and only a regular file is read, at most {@link #MAX_BYTES}.
     */
    static byte[] read(Path marker) {
        try {
            BasicFileAttributes a = Files.readAttributes(marker, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > MAX_BYTES) {
                return null;
            }
            try (SeekableByteChannel in = Files.newByteChannel(marker, StandardOpenOption.READ,
                    LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer buf = ByteBuffer.allocate(MAX_BYTES + 1);
                while (buf.hasRemaining() && in.read(buf) > 0) {
                    // until the end, or one byte more than a marker may have
                }
                return buf.position() > MAX_BYTES ? null : Arrays.copyOf(buf.array(), buf.position());
            }
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            LOG.debug("cannot read {}: {}", marker, e.toString());
            return null;
        }
    }
}
