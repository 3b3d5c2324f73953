package org.streamgrid.protocol;

public enum Errors {
    NONE,
    UNKNOWN_MEMBER_ID,
    ILLEGAL_GENERATION,
    REBALANCE_IN_PROGRESS,
    NOT_COORDINATOR,
    COORDINATOR_LOAD_IN_PROGRESS,
    INCONSISTENT_GROUP_PROTOCOL,
    UNKNOWN_SERVER_ERROR;

    public boolean isRetriableCoordinatorError() {
        return this == NOT_COORDINATOR || this == COORDINATOR_LOAD_IN_PROGRESS;
    }
}
