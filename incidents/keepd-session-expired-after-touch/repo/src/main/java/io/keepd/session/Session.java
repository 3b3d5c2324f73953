package io.keepd.session;

import java.util.Objects;

/**
 * A client session. A session is kept alive by pings and lease renewals; once it is
 * expired every lease it owns is released.
 */
public final class Session {
    public enum State {
        OPEN,
        CLOSING,
        CLOSED
    }

    private final long id;
    private final String owner;
    private final int timeoutMs;
    private volatile long expiryTime;
    private volatile State state = State.OPEN;

    Session(long id, String owner, int timeoutMs) {
        this.id = id;
        this.owner = owner;
        this.timeoutMs = timeoutMs;
    }

    public long getId() {
        return id;
    }

    public String getOwner() {
        return owner;
    }

    public int getTimeoutMs() {
        return timeoutMs;
    }

    public long getExpiryTime() {
        return expiryTime;
    }

    void setExpiryTime(long expiryTime) {
        this.expiryTime = expiryTime;
    }

    public State getState() {
        return state;
    }

    void setState(State state) {
        this.state = state;
    }

    public boolean isClosing() {
        return state != State.OPEN;
    }

    public String hexId() {
        return "0x" + Long.toHexString(id);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Session)) {
            return false;
        }
        return id == ((Session) o).id;
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(id);
    }

    @Override
    public String toString() {
        return "Session[" + hexId() + ", owner=" + owner + ", timeout=" + timeoutMs + "ms, " + state + "]";
    }
}
