package org.streamgrid.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.streamgrid.protocol.Errors;
import org.streamgrid.protocol.Messages.OffsetCommit;
import org.streamgrid.storage.GroupRecord;
import org.streamgrid.storage.PartitionLog;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Persists group membership and committed offsets in the internal groups log, and rebuilds
 * the in-memory cache from it when this node takes over a partition of that log.
 */
public class GroupMetadataManager {
    private static final Logger LOG = LoggerFactory.getLogger(GroupMetadataManager.class);

    private final int brokerId;
    private final int numPartitions;
    private final Map<Integer, PartitionLog> logs;
    private final ConcurrentHashMap<String, GroupMetadata> groups = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Map<String, Long>> offsets = new ConcurrentHashMap<>();
    private final Set<Integer> ownedPartitions = ConcurrentHashMap.newKeySet();
    private final Set<Integer> loadingPartitions = ConcurrentHashMap.newKeySet();

    public GroupMetadataManager(int brokerId, int numPartitions, Map<Integer, PartitionLog> logs) {
        this.brokerId = brokerId;
        this.numPartitions = numPartitions;
        this.logs = logs;
    }

    public int partitionFor(String groupId) {
        return Math.abs(groupId.hashCode() % numPartitions);
    }

    public boolean isLocal(String groupId) {
        return ownedPartitions.contains(partitionFor(groupId));
    }

    public boolean isLoading(String groupId) {
        return loadingPartitions.contains(partitionFor(groupId));
    }

    public GroupMetadata getGroup(String groupId) {
        return groups.get(groupId);
    }

    public List<String> groupIds() {
        return new ArrayList<>(groups.keySet());
    }

    public GroupMetadata getOrCreateGroup(String groupId, String protocolType) {
        return groups.computeIfAbsent(groupId, id -> new GroupMetadata(id, protocolType));
    }

    /** Writes the group's current membership to the groups log. */
    public void storeGroup(GroupMetadata group, Consumer<Errors> callback) {
        List<GroupRecord.Member> members = new ArrayList<>();
        for (MemberMetadata m : group.allMembers()) {
            members.add(new GroupRecord.Member(m.memberId(), m.clientId(), m.sessionTimeoutMs(),
                    m.rebalanceTimeoutMs(), m.subscription()));
        }
        GroupRecord record = new GroupRecord(group.groupId(), group.protocolType(), group.generationId(),
                group.protocol(), group.leaderId(), System.currentTimeMillis(), members);
        PartitionLog log = logs.get(partitionFor(group.groupId()));
        long offset;
        try {
            offset = log.append(record);
        } catch (RuntimeException e) {
            LOG.error("Failed to append group record for {} to {}", group.groupId(), log.name(), e);
            callback.accept(Errors.UNKNOWN_SERVER_ERROR);
            return;
        }
        LOG.info("Appended group record for {} (generation {}, {} members) to {} at offset {}",
                group.groupId(), record.generationId, members.size(), log.name(), offset);
        callback.accept(Errors.NONE);
    }

    /**
     * Loads every group of the given partition. The latest record of a group wins; a tombstone
     * removes it.
     */
    public void loadGroupsForPartition(int partition, Consumer<GroupMetadata> onLoaded) {
        PartitionLog log = logs.get(partition);
        loadingPartitions.add(partition);
        long start = System.currentTimeMillis();
        LOG.info("Loading groups and offsets from {}", log.name());
        Map<String, GroupRecord> latest = new HashMap<>();
        Set<String> removed = new HashSet<>();
        log.replay((offset, rec) -> {
            if (rec.isTombstone()) {
                latest.remove(rec.groupId);
                removed.add(rec.groupId);
            } else {
                latest.put(rec.groupId, rec);
                removed.remove(rec.groupId);
            }
        });
        for (GroupRecord rec : latest.values()) {
            GroupMetadata group = new GroupMetadata(rec.groupId, rec.protocolType);
            List<MemberMetadata> members = new ArrayList<>();
            for (GroupRecord.Member m : rec.members) {
                members.add(new MemberMetadata(m.memberId, m.clientId, m.sessionTimeoutMs, m.rebalanceTimeoutMs,
                        m.subscription));
            }
            group.restore(rec.generationId, rec.protocol, rec.leaderId, members);
            groups.put(rec.groupId, group);
            LOG.info("Loaded group {} at generation {} with {} members (leader {}) from {}", rec.groupId,
                    rec.generationId, members.size(), rec.leaderId, log.name());
            onLoaded.accept(group);
        }
        for (String groupId : removed) {
            groups.remove(groupId);
        }
        ownedPartitions.add(partition);
        loadingPartitions.remove(partition);
        LOG.info("Finished loading {} groups from {} in {} ms", latest.size(), log.name(),
                System.currentTimeMillis() - start);
    }

    public void removeGroupsForPartition(int partition) {
        ownedPartitions.remove(partition);
        int dropped = 0;
        for (String groupId : new ArrayList<>(groups.keySet())) {
            if (partitionFor(groupId) == partition) {
                groups.remove(groupId);
                dropped++;
            }
        }
        LOG.info("Unloaded {} groups of partition {} (broker {} resigned)", dropped, partition, brokerId);
    }

    public void storeOffsets(GroupMetadata group, String memberId, int generation, List<OffsetCommit> commits) {
        Map<String, Long> groupOffsets = offsets.computeIfAbsent(group.groupId(), g -> new ConcurrentHashMap<>());
        for (OffsetCommit c : commits) {
            Long previous = groupOffsets.put(c.partition, c.offset);
            if (previous != null && previous > c.offset) {
                LOG.warn("Committed offset of {} in group {} moved backwards from {} to {} (member {}, generation {})",
                        c.partition, group.groupId(), previous, c.offset, memberId, generation);
            }
        }
    }

    public Long committedOffset(String groupId, String partition) {
        Map<String, Long> groupOffsets = offsets.get(groupId);
        return groupOffsets == null ? null : groupOffsets.get(partition);
    }
}
