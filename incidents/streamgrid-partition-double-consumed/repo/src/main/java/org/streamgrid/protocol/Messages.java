package org.streamgrid.protocol;

import java.util.Collections;
import java.util.List;
import java.util.Map;

/** Request and response bodies of the group membership protocol. */
public final class Messages {
    private Messages() {
    }

    public static final class JoinGroupResult {
        public final Errors error;
        public final int generationId;
        public final String protocol;
        public final String memberId;
        public final String leaderId;
        /** Subscriptions of every member; only filled in for the leader. */
        public final Map<String, List<String>> members;

        public JoinGroupResult(Errors error, int generationId, String protocol, String memberId, String leaderId,
                               Map<String, List<String>> members) {
            this.error = error;
            this.generationId = generationId;
            this.protocol = protocol;
            this.memberId = memberId;
            this.leaderId = leaderId;
            this.members = members;
        }

        public static JoinGroupResult error(String memberId, Errors error) {
            return new JoinGroupResult(error, -1, null, memberId, null, Collections.emptyMap());
        }

        public boolean isLeader() {
            return memberId != null && memberId.equals(leaderId);
        }
    }

    public static final class SyncGroupResult {
        public final Errors error;
        public final List<String> assignment;

        public SyncGroupResult(Errors error, List<String> assignment) {
            this.error = error;
            this.assignment = assignment;
        }
    }

    public static final class OffsetCommit {
        public final String partition;
        public final long offset;

        public OffsetCommit(String partition, long offset) {
            this.partition = partition;
            this.offset = offset;
        }
    }
}
