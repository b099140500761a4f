package io.gantry.placement.backend;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The number of each tenant that ran on this host, in order of first run, kept in {@value #FILE} in the local
 * backend's work directory (readable by placement only): a tenant keeps its number, so its uid, across placement
 * restarts, and no two tenants ever share one.
 */
final class TenantIds {
    static final String FILE = ".tenant-ids";

    private final Path file;
    private final Map<String, Integer> numbers = new HashMap<>();

    TenantIds(Path workDir) {
        this.file = workDir.resolve(FILE);
    }

    /** The tenant's number: the one it has, or the next one, written down before it is answered. */
    synchronized int number(String tenant) throws IOException {
        if (numbers.isEmpty() && Files.exists(file)) {
            Properties p = new Properties();
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(in);
            }
            p.forEach((k, v) -> numbers.put((String) k, Integer.parseInt(((String) v).strip())));
        }
        Integer known = numbers.get(tenant);
        if (known != null) {
            return known;
        }
        int next = numbers.values().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        Properties p = new Properties();
        numbers.forEach((k, v) -> p.setProperty(k, Integer.toString(v)));
        p.setProperty(tenant, Integer.toString(next));
        Files.createDirectories(file.getParent());
        Path part = file.resolveSibling(FILE + ".part");
        try (var out = Files.newBufferedWriter(part, StandardCharsets.UTF_8)) {
            p.store(out, "the local backend's tenant numbers: uid = gid = base + number; never reuse one");
        }
        try {
            Files.setPosixFilePermissions(part, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system
        }
        Files.move(part, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        numbers.put(tenant, next);
        return next;
    }
}
