package io.keepd.lease;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Append-only journal of lease grants and releases. Every entry is forced to disk before
 * the change becomes visible to clients.
 */
public final class Journal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
    private static final long SLOW_SYNC_WARN_MS = 100;

    private final FileChannel channel;
    private final Path path;
    private long entries;

    public Journal(Path path) throws IOException {
        this.path = path;
        this.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
        LOG.info("Opened lease journal {} ({} bytes)", path, channel.size());
    }

    public synchronized void append(String op, String leaseName, long session, long version) {
        String line = op + " " + leaseName + " 0x" + Long.toHexString(session) + " " + version + "\n";
        long start = System.nanoTime();
        try {
            channel.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
            channel.force(false);
        } catch (IOException e) {
            throw new JournalException("Failed to append to " + path, e);
        }
        entries++;
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        if (tookMs > SLOW_SYNC_WARN_MS) {
            LOG.warn("fsync of lease journal took {}ms (entry {}), disk may be overloaded", tookMs, entries);
        }
    }

    public synchronized long size() {
        return entries;
    }

    @Override
    public synchronized void close() throws IOException {
        channel.close();
    }

    public static final class JournalException extends RuntimeException {
        JournalException(String msg, Throwable cause) {
            super(msg, cause);
        }
    }
}
