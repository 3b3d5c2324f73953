package org.streamgrid.coordinator;

import java.util.EnumSet;
import java.util.Set;

public enum GroupState {
    EMPTY,
    PREPARING_REBALANCE,
    COMPLETING_REBALANCE,
    STABLE,
    DEAD;

    private Set<GroupState> validPrevious;

    static {
        EMPTY.validPrevious = EnumSet.of(PREPARING_REBALANCE);
        PREPARING_REBALANCE.validPrevious = EnumSet.of(STABLE, COMPLETING_REBALANCE, EMPTY);
        COMPLETING_REBALANCE.validPrevious = EnumSet.of(PREPARING_REBALANCE);
        STABLE.validPrevious = EnumSet.of(COMPLETING_REBALANCE);
        DEAD.validPrevious = EnumSet.of(STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD);
    }

    public boolean canTransitionFrom(GroupState previous) {
        return validPrevious.contains(previous);
    }
}
