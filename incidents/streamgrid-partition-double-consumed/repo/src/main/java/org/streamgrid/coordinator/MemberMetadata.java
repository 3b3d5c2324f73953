package org.streamgrid.coordinator;

import org.streamgrid.protocol.Messages.JoinGroupResult;
import org.streamgrid.protocol.Messages.SyncGroupResult;

import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/** Coordinator-side view of one member of a group. */
public final class MemberMetadata {
    private final String memberId;
    private final String clientId;
    private final int sessionTimeoutMs;
    private final int rebalanceTimeoutMs;
    private List<String> subscription;
    private List<String> assignment = Collections.emptyList();
    private long lastHeartbeatMs;
    private Consumer<JoinGroupResult> awaitingJoin;
    private Consumer<SyncGroupResult> awaitingSync;

    public MemberMetadata(String memberId, String clientId, int sessionTimeoutMs, int rebalanceTimeoutMs,
                          List<String> subscription) {
        this.memberId = memberId;
        this.clientId = clientId;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.subscription = subscription;
    }

    public String memberId() {
        return memberId;
    }

    public String clientId() {
        return clientId;
    }

    public int sessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    public int rebalanceTimeoutMs() {
        return rebalanceTimeoutMs;
    }

    public List<String> subscription() {
        return subscription;
    }

    void setSubscription(List<String> subscription) {
        this.subscription = subscription;
    }

    public boolean matches(List<String> otherSubscription) {
        return subscription.equals(otherSubscription);
    }

    public List<String> assignment() {
        return assignment;
    }

    void setAssignment(List<String> assignment) {
        this.assignment = assignment;
    }

    public long lastHeartbeatMs() {
        return lastHeartbeatMs;
    }

    void heartbeat(long now) {
        this.lastHeartbeatMs = now;
    }

    boolean isAwaitingJoin() {
        return awaitingJoin != null;
    }

    void awaitJoin(Consumer<JoinGroupResult> callback) {
        this.awaitingJoin = callback;
    }

    void completeJoin(JoinGroupResult result) {
        Consumer<JoinGroupResult> cb = awaitingJoin;
        awaitingJoin = null;
        if (cb != null) {
            cb.accept(result);
        }
    }

    boolean isAwaitingSync() {
        return awaitingSync != null;
    }

    void awaitSync(Consumer<SyncGroupResult> callback) {
        this.awaitingSync = callback;
    }

    void completeSync(SyncGroupResult result) {
        Consumer<SyncGroupResult> cb = awaitingSync;
        awaitingSync = null;
        if (cb != null) {
            cb.accept(result);
        }
    }

    @Override
    public String toString() {
        return "Member(" + memberId + ", client=" + clientId + ", subscription=" + subscription + ")";
    }
}
