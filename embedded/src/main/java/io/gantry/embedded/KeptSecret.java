package io.gantry.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A password an embedded server keeps in a file of its own (PostgreSQL's superuser's, the dev broker's). */
public final class KeptSecret {
    private KeptSecret() {
    }

    /** Read from {@code file}, or made (random hex, owner-only, written atomically) on first start. */
    public static String read(Path file) throws IOException {
        if (Files.exists(file)) {
            return Files.readString(file).strip();
        }
        byte[] random = new byte[24];
        new java.security.SecureRandom().nextBytes(random);
        String password = java.util.HexFormat.of().formatHex(random);
        Path part = file.resolveSibling(file.getFileName() + ".part");
        Files.writeString(part, password + "\n");
        try {
            Files.setPosixFilePermissions(part, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system
        }
        Files.move(part, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return password;
    }
}
