package org.streamgrid.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.streamgrid.protocol.Errors;
import org.streamgrid.protocol.Messages.JoinGroupResult;
import org.streamgrid.protocol.Messages.OffsetCommit;
import org.streamgrid.protocol.Messages.SyncGroupResult;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs the group membership protocol for the groups whose partition of the internal groups log
 * is led by this broker: join, sync, heartbeat, leave and offset commits.
 */
public class GroupCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
    private static final String CONSUMER_PROTOCOL = "consumer";

    private final int brokerId;
    private final GroupMetadataManager metadataManager;
    private final ScheduledExecutorService timer;
    private final int initialRebalanceDelayMs;

    public GroupCoordinator(int brokerId, GroupMetadataManager metadataManager, int initialRebalanceDelayMs) {
        this.brokerId = brokerId;
        this.metadataManager = metadataManager;
        this.initialRebalanceDelayMs = initialRebalanceDelayMs;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "group-coordinator-timer");
            t.setDaemon(true);
            return t;
        });
    }

    public void startup() {
        timer.scheduleAtFixedRate(this::expireSessions, 1, 1, TimeUnit.SECONDS);
        LOG.info("GroupCoordinator {} started", brokerId);
    }

    private Errors validateGroupStatus(String groupId) {
        if (!metadataManager.isLocal(groupId)) {
            return metadataManager.isLoading(groupId) ? Errors.COORDINATOR_LOAD_IN_PROGRESS : Errors.NOT_COORDINATOR;
        }
        return Errors.NONE;
    }

    public void handleJoinGroup(String groupId, String memberId, String clientId, int sessionTimeoutMs,
                                int rebalanceTimeoutMs, List<String> subscription,
                                Consumer<JoinGroupResult> callback) {
        Errors status = validateGroupStatus(groupId);
        if (status != Errors.NONE) {
            callback.accept(JoinGroupResult.error(memberId, status));
            return;
        }
        GroupMetadata group = metadataManager.getOrCreateGroup(groupId, CONSUMER_PROTOCOL);
        synchronized (group) {
            if (memberId.isEmpty()) {
                String newMemberId = clientId + "-" + UUID.randomUUID();
                MemberMetadata member = new MemberMetadata(newMemberId, clientId, sessionTimeoutMs,
                        rebalanceTimeoutMs, subscription);
                member.heartbeat(System.currentTimeMillis());
                member.awaitJoin(callback);
                group.add(member);
                LOG.info("Added new member {} to group {} ({} members)", newMemberId, groupId, group.size());
                if (group.is(GroupState.EMPTY)) {
                    prepareRebalance(group, "new member " + newMemberId + " joined empty group",
                            initialRebalanceDelayMs);
                } else if (!group.is(GroupState.PREPARING_REBALANCE)) {
                    prepareRebalance(group, "new member " + newMemberId + " joined", member.rebalanceTimeoutMs());
                } else {
                    tryCompleteJoin(group);
                }
                return;
            }
            MemberMetadata member = group.get(memberId);
            if (member == null) {
                callback.accept(JoinGroupResult.error(memberId, Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            member.heartbeat(System.currentTimeMillis());
            switch (group.state()) {
                case PREPARING_REBALANCE:
                    member.setSubscription(subscription);
                    member.awaitJoin(callback);
                    tryCompleteJoin(group);
                    break;
                case COMPLETING_REBALANCE:
                case STABLE:
                    if (group.isLeader(memberId) || !member.matches(subscription)
                            || group.is(GroupState.COMPLETING_REBALANCE)) {
                        member.setSubscription(subscription);
                        member.awaitJoin(callback);
                        prepareRebalance(group, "member " + memberId + " rejoined", member.rebalanceTimeoutMs());
                    } else {
                        // Follower rejoining a stable group with unchanged metadata: nothing to rebalance.
                        callback.accept(new JoinGroupResult(Errors.NONE, group.generationId(), group.protocol(),
                                memberId, group.leaderId(), Collections.emptyMap()));
                    }
                    break;
                default:
                    callback.accept(JoinGroupResult.error(memberId, Errors.UNKNOWN_MEMBER_ID));
            }
        }
    }

    private void prepareRebalance(GroupMetadata group, String reason, int delayMs) {
        if (group.is(GroupState.COMPLETING_REBALANCE)) {
            for (MemberMetadata m : group.allMembers()) {
                m.completeSync(new SyncGroupResult(Errors.REBALANCE_IN_PROGRESS, Collections.emptyList()));
            }
        }
        LOG.info("Preparing to rebalance group {} in state {} with old generation {} (reason: {})",
                group.groupId(), group.state(), group.generationId(), reason);
        group.transitionTo(GroupState.PREPARING_REBALANCE);
        final int generationAtStart = group.generationId();
        timer.schedule(() -> onRebalanceTimeout(group, generationAtStart), delayMs, TimeUnit.MILLISECONDS);
        tryCompleteJoin(group);
    }

    private static int maxRebalanceTimeoutMs(GroupMetadata group) {
        int max = 0;
        for (MemberMetadata m : group.allMembers()) {
            max = Math.max(max, m.rebalanceTimeoutMs());
        }
        return max;
    }

    private void tryCompleteJoin(GroupMetadata group) {
        if (group.is(GroupState.PREPARING_REBALANCE) && group.allMembersJoined()) {
            onCompleteJoin(group);
        }
    }

    private void onRebalanceTimeout(GroupMetadata group, int generationAtStart) {
        synchronized (group) {
            if (group.is(GroupState.PREPARING_REBALANCE) && group.generationId() == generationAtStart) {
                onCompleteJoin(group);
            }
        }
    }

    private void onCompleteJoin(GroupMetadata group) {
        for (MemberMetadata m : group.notYetRejoined()) {
            LOG.info("Member {} in group {} has failed to rejoin, removing it", m.memberId(), group.groupId());
            group.remove(m.memberId());
        }
        if (group.isEmpty()) {
            group.initNextGeneration();
            metadataManager.storeGroup(group, error -> { });
            LOG.info("Group {} with generation {} is now empty", group.groupId(), group.generationId());
            return;
        }
        // Persist the new membership before any member learns about it, so that a coordinator
        // taking over the partition knows every member that may send heartbeats.
        metadataManager.storeGroup(group, error -> {
            if (error != Errors.NONE) {
                LOG.warn("Failed to persist membership of group {}: {}", group.groupId(), error);
            }
        });
        group.initNextGeneration();
        LOG.info("Stabilized group {} generation {} (protocol {}, {} members, leader {})", group.groupId(),
                group.generationId(), group.protocol(), group.size(), group.leaderId());
        Map<String, List<String>> subscriptions = group.subscriptions();
        for (MemberMetadata m : group.allMembers()) {
            boolean leader = group.isLeader(m.memberId());
            m.completeJoin(new JoinGroupResult(Errors.NONE, group.generationId(), group.protocol(), m.memberId(),
                    group.leaderId(), leader ? subscriptions : Collections.emptyMap()));
        }
    }

    public void handleSyncGroup(String groupId, int generationId, String memberId,
                                Map<String, List<String>> assignments, Consumer<SyncGroupResult> callback) {
        Errors status = validateGroupStatus(groupId);
        GroupMetadata group = metadataManager.getGroup(groupId);
        if (status != Errors.NONE || group == null) {
            callback.accept(new SyncGroupResult(status != Errors.NONE ? status : Errors.UNKNOWN_MEMBER_ID,
                    Collections.emptyList()));
            return;
        }
        synchronized (group) {
            MemberMetadata member = group.get(memberId);
            if (member == null) {
                callback.accept(new SyncGroupResult(Errors.UNKNOWN_MEMBER_ID, Collections.emptyList()));
                return;
            }
            if (generationId != group.generationId()) {
                callback.accept(new SyncGroupResult(Errors.ILLEGAL_GENERATION, Collections.emptyList()));
                return;
            }
            switch (group.state()) {
                case PREPARING_REBALANCE:
                    callback.accept(new SyncGroupResult(Errors.REBALANCE_IN_PROGRESS, Collections.emptyList()));
                    return;
                case STABLE:
                    callback.accept(new SyncGroupResult(Errors.NONE, member.assignment()));
                    return;
                case COMPLETING_REBALANCE:
                    member.awaitSync(callback);
                    if (group.isLeader(memberId)) {
                        LOG.info("Assignment received from leader {} for group {} for generation {}", memberId,
                                groupId, generationId);
                        for (MemberMetadata m : group.allMembers()) {
                            List<String> a = assignments.getOrDefault(m.memberId(), Collections.emptyList());
                            m.setAssignment(a);
                        }
                        group.transitionTo(GroupState.STABLE);
                        for (MemberMetadata m : group.allMembers()) {
                            m.completeSync(new SyncGroupResult(Errors.NONE, m.assignment()));
                        }
                    }
                    return;
                default:
                    callback.accept(new SyncGroupResult(Errors.UNKNOWN_MEMBER_ID, Collections.emptyList()));
            }
        }
    }

    public Errors handleHeartbeat(String groupId, String memberId, int generationId) {
        Errors status = validateGroupStatus(groupId);
        if (status != Errors.NONE) {
            return status;
        }
        GroupMetadata group = metadataManager.getGroup(groupId);
        if (group == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        synchronized (group) {
            MemberMetadata member = group.get(memberId);
            if (member == null) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            member.heartbeat(System.currentTimeMillis());
            if (generationId != group.generationId()) {
                LOG.debug("Heartbeat from {} in group {} carries generation {}, current is {}", memberId, groupId,
                        generationId, group.generationId());
                return Errors.ILLEGAL_GENERATION;
            }
            if (group.is(GroupState.PREPARING_REBALANCE)) {
                return Errors.REBALANCE_IN_PROGRESS;
            }
            return Errors.NONE;
        }
    }

    public Errors handleCommitOffsets(String groupId, String memberId, int generationId, List<OffsetCommit> commits) {
        Errors status = validateGroupStatus(groupId);
        if (status != Errors.NONE) {
            return status;
        }
        GroupMetadata group = metadataManager.getGroup(groupId);
        if (group == null) {
            return Errors.ILLEGAL_GENERATION;
        }
        synchronized (group) {
            if (!group.has(memberId)) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            if (generationId != group.generationId()) {
                return Errors.ILLEGAL_GENERATION;
            }
            if (group.is(GroupState.COMPLETING_REBALANCE)) {
                return Errors.REBALANCE_IN_PROGRESS;
            }
            group.get(memberId).heartbeat(System.currentTimeMillis());
            metadataManager.storeOffsets(group, memberId, generationId, commits);
            return Errors.NONE;
        }
    }

    public Errors handleLeaveGroup(String groupId, String memberId) {
        GroupMetadata group = metadataManager.getGroup(groupId);
        if (group == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        synchronized (group) {
            if (!group.has(memberId)) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            LOG.info("Member {} has left group {}", memberId, groupId);
            group.remove(memberId);
            if (group.is(GroupState.STABLE) || group.is(GroupState.COMPLETING_REBALANCE)) {
                prepareRebalance(group, "member " + memberId + " left", maxRebalanceTimeoutMs(group));
            } else {
                tryCompleteJoin(group);
            }
            return Errors.NONE;
        }
    }

    private void expireSessions() {
        long now = System.currentTimeMillis();
        List<GroupMetadata> snapshot = new ArrayList<>();
        for (String id : metadataManager.groupIds()) {
            GroupMetadata g = metadataManager.getGroup(id);
            if (g != null) {
                snapshot.add(g);
            }
        }
        for (GroupMetadata group : snapshot) {
            synchronized (group) {
                for (MemberMetadata m : new ArrayList<>(group.allMembers())) {
                    if (!m.isAwaitingJoin() && now - m.lastHeartbeatMs() > m.sessionTimeoutMs()) {
                        LOG.info("Member {} in group {} has failed, removing it from the group (session timeout {} ms)",
                                m.memberId(), group.groupId(), m.sessionTimeoutMs());
                        group.remove(m.memberId());
                        if (!group.is(GroupState.PREPARING_REBALANCE)) {
                            prepareRebalance(group, "removing member " + m.memberId() + " on heartbeat expiration",
                                    m.rebalanceTimeoutMs());
                        } else {
                            tryCompleteJoin(group);
                        }
                    }
                }
            }
        }
    }

    /** Called when this broker becomes leader of a partition of the groups log. */
    public void onElection(int partition) {
        LOG.info("Elected as the group coordinator for partition {}", partition);
        metadataManager.loadGroupsForPartition(partition, group -> {
            long now = System.currentTimeMillis();
            synchronized (group) {
                for (MemberMetadata m : group.allMembers()) {
                    m.heartbeat(now);
                }
            }
        });
    }

    /** Called when this broker stops leading a partition of the groups log. */
    public void onResignation(int partition) {
        LOG.info("Resigned as the group coordinator for partition {}", partition);
        metadataManager.removeGroupsForPartition(partition);
    }

    public void shutdown() {
        timer.shutdownNow();
        LOG.info("GroupCoordinator {} shut down", brokerId);
    }
}
