package org.streamgrid.client;

import org.streamgrid.coordinator.GroupCoordinator;
import org.streamgrid.protocol.Errors;
import org.streamgrid.protocol.Messages.JoinGroupResult;
import org.streamgrid.protocol.Messages.OffsetCommit;
import org.streamgrid.protocol.Messages.SyncGroupResult;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Client-side channel to the group coordinator. The in-process variant is used by embedded setups. */
public interface CoordinatorChannel {
    CompletableFuture<JoinGroupResult> joinGroup(String groupId, String memberId, String clientId,
                                                 int sessionTimeoutMs, int rebalanceTimeoutMs,
                                                 List<String> subscription);

    CompletableFuture<SyncGroupResult> syncGroup(String groupId, int generation, String memberId,
                                                 Map<String, List<String>> assignments);

    Errors heartbeat(String groupId, String memberId, int generation);

    Errors commit(String groupId, String memberId, int generation, List<OffsetCommit> commits);

    Errors leave(String groupId, String memberId);

    static CoordinatorChannel inProcess(GroupCoordinator coordinator) {
        return new CoordinatorChannel() {
            @Override
            public CompletableFuture<JoinGroupResult> joinGroup(String groupId, String memberId, String clientId,
                                                                int sessionTimeoutMs, int rebalanceTimeoutMs,
                                                                List<String> subscription) {
                CompletableFuture<JoinGroupResult> f = new CompletableFuture<>();
                coordinator.handleJoinGroup(groupId, memberId, clientId, sessionTimeoutMs, rebalanceTimeoutMs,
                        subscription, f::complete);
                return f;
            }

            @Override
            public CompletableFuture<SyncGroupResult> syncGroup(String groupId, int generation, String memberId,
                                                                Map<String, List<String>> assignments) {
                CompletableFuture<SyncGroupResult> f = new CompletableFuture<>();
                coordinator.handleSyncGroup(groupId, generation, memberId, assignments, f::complete);
                return f;
            }

            @Override
            public Errors heartbeat(String groupId, String memberId, int generation) {
                return coordinator.handleHeartbeat(groupId, memberId, generation);
            }

            @Override
            public Errors commit(String groupId, String memberId, int generation, List<OffsetCommit> commits) {
                return coordinator.handleCommitOffsets(groupId, memberId, generation, commits);
            }

            @Override
            public Errors leave(String groupId, String memberId) {
                return coordinator.handleLeaveGroup(groupId, memberId);
            }
        };
    }
}
