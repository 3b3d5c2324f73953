package org.streamgrid.storage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Value persisted in the internal groups log for a group's membership. */
public final class GroupRecord {
    public static final class Member {
        public final String memberId;
        public final String clientId;
        public final int sessionTimeoutMs;
        public final int rebalanceTimeoutMs;
        public final List<String> subscription;

        public Member(String memberId, String clientId, int sessionTimeoutMs, int rebalanceTimeoutMs,
                      List<String> subscription) {
            this.memberId = memberId;
            this.clientId = clientId;
            this.sessionTimeoutMs = sessionTimeoutMs;
            this.rebalanceTimeoutMs = rebalanceTimeoutMs;
            this.subscription = Collections.unmodifiableList(new ArrayList<>(subscription));
        }
    }

    public final String groupId;
    public final String protocolType;
    public final int generationId;
    public final String protocol;
    public final String leaderId;
    public final long timestampMs;
    public final List<Member> members;

    public GroupRecord(String groupId, String protocolType, int generationId, String protocol, String leaderId,
                       long timestampMs, List<Member> members) {
        this.groupId = groupId;
        this.protocolType = protocolType;
        this.generationId = generationId;
        this.protocol = protocol;
        this.leaderId = leaderId;
        this.timestampMs = timestampMs;
        this.members = Collections.unmodifiableList(new ArrayList<>(members));
    }

    /** A tombstone marks a group that was deleted. */
    public static GroupRecord tombstone(String groupId, long timestampMs) {
        return new GroupRecord(groupId, null, -1, null, null, timestampMs, Collections.emptyList());
    }

    public boolean isTombstone() {
        return protocolType == null;
    }
}
