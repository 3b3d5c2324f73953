package org.streamgrid.client;

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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Consumer-side half of the group protocol: keeps the member joined, heartbeats, and owns the
 * set of partitions the consumer is allowed to fetch.
 */
public class ConsumerCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerCoordinator.class);
    public static final int NO_GENERATION = -1;

    public interface RebalanceListener {
        void onPartitionsRevoked(List<String> partitions);

        void onPartitionsAssigned(List<String> partitions);
    }

    private final String groupId;
    private final String clientId;
    private final List<String> subscription;
    private final Map<String, Integer> partitionsPerTopic;
    private final CoordinatorChannel channel;
    private final RangeAssignor assignor = new RangeAssignor();
    private final RebalanceListener listener;
    private final int sessionTimeoutMs;
    private final int rebalanceTimeoutMs;

    private String memberId = "";
    private int generation = NO_GENERATION;
    private List<String> assigned = Collections.emptyList();
    private boolean rejoinNeeded = true;

    public ConsumerCoordinator(String groupId, String clientId, List<String> subscription,
                               Map<String, Integer> partitionsPerTopic, CoordinatorChannel channel,
                               RebalanceListener listener, int sessionTimeoutMs, int rebalanceTimeoutMs) {
        this.groupId = groupId;
        this.clientId = clientId;
        this.subscription = subscription;
        this.partitionsPerTopic = partitionsPerTopic;
        this.channel = channel;
        this.listener = listener;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
    }

    public synchronized List<String> assignedPartitions() {
        return assigned;
    }

    public synchronized int generation() {
        return generation;
    }

    /** Makes sure the member is part of the group and has an assignment; called from poll(). */
    public synchronized void ensureActiveGroup() throws InterruptedException {
        while (rejoinNeeded) {
            LOG.info("(Re-)joining group {}", groupId);
            JoinGroupResult join;
            try {
                join = channel.joinGroup(groupId, memberId, clientId, sessionTimeoutMs, rebalanceTimeoutMs,
                        subscription).get(rebalanceTimeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("JoinGroup for group {} failed: {}", groupId, e.toString());
                Thread.sleep(100);
                continue;
            }
            if (join.error != Errors.NONE) {
                handleJoinError(join.error);
                continue;
            }
            LOG.info("Successfully joined group {} with generation {} as {} (leader: {})", groupId,
                    join.generationId, join.memberId, join.leaderId);
            Map<String, List<String>> assignments = Collections.emptyMap();
            if (join.isLeader()) {
                LOG.info("Performing assignment for group {} using protocol {} for {} members", groupId,
                        join.protocol, join.members.size());
                assignments = assignor.assign(partitionsPerTopic, join.members);
            }
            SyncGroupResult sync;
            try {
                sync = channel.syncGroup(groupId, join.generationId, join.memberId, assignments)
                        .get(rebalanceTimeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("SyncGroup for group {} failed: {}", groupId, e.toString());
                continue;
            }
            if (sync.error != Errors.NONE) {
                LOG.info("SyncGroup for group {} failed with {}, rejoining", groupId, sync.error);
                continue;
            }
            onJoinComplete(join.generationId, join.memberId, sync.assignment);
        }
    }

    private void handleJoinError(Errors error) throws InterruptedException {
        switch (error) {
            case UNKNOWN_MEMBER_ID:
                LOG.info("Member {} unknown to coordinator of group {}, resetting member id", memberId, groupId);
                memberId = "";
                generation = NO_GENERATION;
                break;
            case COORDINATOR_LOAD_IN_PROGRESS:
            case NOT_COORDINATOR:
                LOG.info("Coordinator for group {} not available ({}), backing off", groupId, error);
                Thread.sleep(200);
                break;
            default:
                LOG.warn("JoinGroup for group {} failed with {}", groupId, error);
                Thread.sleep(100);
        }
    }

    private void onJoinComplete(int newGeneration, String newMemberId, List<String> newAssignment) {
        rejoinNeeded = false;
        if (newGeneration == generation && newMemberId.equals(memberId) && !assigned.isEmpty()) {
            LOG.info("Rejoined group {} at unchanged generation {}, retaining {} assigned partitions: {}", groupId,
                    generation, assigned.size(), assigned);
            return;
        }
        if (!assigned.isEmpty()) {
            LOG.info("Revoking previously assigned partitions {} for group {}", assigned, groupId);
            listener.onPartitionsRevoked(assigned);
        }
        this.generation = newGeneration;
        this.memberId = newMemberId;
        this.assigned = Collections.unmodifiableList(new ArrayList<>(newAssignment));
        LOG.info("Adding newly assigned partitions: {} (generation {})", assigned, generation);
        listener.onPartitionsAssigned(assigned);
    }

    /** Runs on the heartbeat thread every heartbeat interval. */
    public synchronized void sendHeartbeat() {
        if (rejoinNeeded || generation == NO_GENERATION) {
            return;
        }
        Errors error = channel.heartbeat(groupId, memberId, generation);
        switch (error) {
            case NONE:
                return;
            case REBALANCE_IN_PROGRESS:
            case ILLEGAL_GENERATION:
                LOG.info("Attempt to heartbeat with generation {} and member id {} failed: {}, rejoining group {}",
                        generation, memberId, error, groupId);
                rejoinNeeded = true;
                return;
            case UNKNOWN_MEMBER_ID:
                LOG.info("Attempt to heartbeat failed for group {}: member {} is unknown, resetting", groupId,
                        memberId);
                memberId = "";
                generation = NO_GENERATION;
                rejoinNeeded = true;
                return;
            default:
                LOG.warn("Heartbeat for group {} failed with {}", groupId, error);
        }
    }

    public synchronized boolean commit(Map<String, Long> offsets) {
        List<OffsetCommit> commits = new ArrayList<>();
        for (Map.Entry<String, Long> e : offsets.entrySet()) {
            commits.add(new OffsetCommit(e.getKey(), e.getValue()));
        }
        Errors error = channel.commit(groupId, memberId, generation, commits);
        if (error != Errors.NONE) {
            LOG.warn("Offset commit for group {} failed: {}", groupId, error);
            if (error == Errors.ILLEGAL_GENERATION || error == Errors.REBALANCE_IN_PROGRESS) {
                rejoinNeeded = true;
            }
            return false;
        }
        return true;
    }

    public synchronized void close() {
        if (!memberId.isEmpty()) {
            LOG.info("Member {} sending LeaveGroup request to coordinator of group {}", memberId, groupId);
            channel.leave(groupId, memberId);
        }
    }
}
