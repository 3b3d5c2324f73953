package org.streamgrid.coordinator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * State of one consumer group as held by its coordinator. All access is synchronized on the
 * instance by the {@link GroupCoordinator}.
 */
public final class GroupMetadata {
    private final String groupId;
    private final String protocolType;
    private final Map<String, MemberMetadata> members = new LinkedHashMap<>();
    private GroupState state = GroupState.EMPTY;
    private int generationId;
    private String protocol;
    private String leaderId;

    public GroupMetadata(String groupId, String protocolType) {
        this.groupId = groupId;
        this.protocolType = protocolType;
    }

    public String groupId() {
        return groupId;
    }

    public String protocolType() {
        return protocolType;
    }

    public GroupState state() {
        return state;
    }

    public boolean is(GroupState s) {
        return state == s;
    }

    public int generationId() {
        return generationId;
    }

    public String protocol() {
        return protocol;
    }

    public String leaderId() {
        return leaderId;
    }

    public boolean isLeader(String memberId) {
        return memberId.equals(leaderId);
    }

    public boolean has(String memberId) {
        return members.containsKey(memberId);
    }

    public MemberMetadata get(String memberId) {
        return members.get(memberId);
    }

    public Collection<MemberMetadata> allMembers() {
        return members.values();
    }

    public int size() {
        return members.size();
    }

    public boolean isEmpty() {
        return members.isEmpty();
    }

    public void add(MemberMetadata member) {
        if (members.isEmpty()) {
            leaderId = member.memberId();
        }
        members.put(member.memberId(), member);
    }

    public void remove(String memberId) {
        members.remove(memberId);
        if (memberId.equals(leaderId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
    }

    public void transitionTo(GroupState target) {
        if (!target.canTransitionFrom(state)) {
            throw new IllegalStateException("Group " + groupId + " should be in one of the valid previous states of "
                    + target + " but is in " + state);
        }
        state = target;
    }

    public boolean allMembersJoined() {
        for (MemberMetadata m : members.values()) {
            if (!m.isAwaitingJoin()) {
                return false;
            }
        }
        return true;
    }

    public List<MemberMetadata> notYetRejoined() {
        List<MemberMetadata> out = new ArrayList<>();
        for (MemberMetadata m : members.values()) {
            if (!m.isAwaitingJoin()) {
                out.add(m);
            }
        }
        return out;
    }

    /**
     * Starts the next generation: bumps the generation id and moves the group to
     * COMPLETING_REBALANCE, or to EMPTY when nobody is left.
     */
    public void initNextGeneration() {
        generationId += 1;
        if (!members.isEmpty()) {
            protocol = selectProtocol();
            transitionTo(GroupState.COMPLETING_REBALANCE);
        } else {
            protocol = null;
            transitionTo(GroupState.EMPTY);
        }
    }

    private String selectProtocol() {
        return "range";
    }

    public Map<String, List<String>> subscriptions() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (MemberMetadata m : members.values()) {
            out.put(m.memberId(), m.subscription());
        }
        return out;
    }

    /** Re-creates group state from a persisted record, used when this node becomes coordinator. */
    void restore(int generation, String protocol, String leader, List<MemberMetadata> restored) {
        this.generationId = generation;
        this.protocol = protocol;
        this.members.clear();
        for (MemberMetadata m : restored) {
            members.put(m.memberId(), m);
        }
        this.leaderId = leader;
        this.state = members.isEmpty() ? GroupState.EMPTY : GroupState.STABLE;
    }

    @Override
    public String toString() {
        return "Group(" + groupId + ", " + state + ", generation=" + generationId + ", members=" + members.size() + ")";
    }
}
