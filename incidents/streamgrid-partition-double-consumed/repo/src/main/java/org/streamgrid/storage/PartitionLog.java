package org.streamgrid.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * In-memory stand-in for one partition of the replicated internal groups topic. Appends are
 * acknowledged once they are durable on the replica set.
 */
public final class PartitionLog {
    private final String name;
    private final List<GroupRecord> records = new ArrayList<>();
    private long logStartOffset;

    public PartitionLog(String name) {
        this.name = name;
    }

    public String name() {
        return name;
    }

    public synchronized long append(GroupRecord record) {
        records.add(record);
        return logStartOffset + records.size() - 1;
    }

    public synchronized long logEndOffset() {
        return logStartOffset + records.size();
    }

    /** Replays every record from the start of the log, in offset order. */
    public void replay(BiConsumer<Long, GroupRecord> visitor) {
        List<GroupRecord> snapshot;
        long start;
        synchronized (this) {
            snapshot = new ArrayList<>(records);
            start = logStartOffset;
        }
        for (int i = 0; i < snapshot.size(); i++) {
            visitor.accept(start + i, snapshot.get(i));
        }
    }

    /** Drops everything before {@code offset}; used by compaction. */
    public synchronized void truncateBefore(long offset) {
        int drop = (int) Math.max(0, Math.min(records.size(), offset - logStartOffset));
        records.subList(0, drop).clear();
        logStartOffset += drop;
    }
}
