package io.keepd.lease;

/** A named, exclusive lease held by one session until it is released or its session dies. */
public final class Lease {
    private final String name;
    private final long ownerSession;
    private final String ownerName;
    private final long grantedAt;
    private final long version;
    private volatile long deadline;

    Lease(String name, long ownerSession, String ownerName, long grantedAt, long deadline, long version) {
        this.name = name;
        this.ownerSession = ownerSession;
        this.ownerName = ownerName;
        this.grantedAt = grantedAt;
        this.deadline = deadline;
        this.version = version;
    }

    public String getName() {
        return name;
    }

    public long getOwnerSession() {
        return ownerSession;
    }

    public String getOwnerName() {
        return ownerName;
    }

    public long getGrantedAt() {
        return grantedAt;
    }

    public long getDeadline() {
        return deadline;
    }

    void extendTo(long newDeadline) {
        if (newDeadline > deadline) {
            deadline = newDeadline;
        }
    }

    public long getVersion() {
        return version;
    }

    @Override
    public String toString() {
        return "Lease[" + name + " v" + version + " owner=0x" + Long.toHexString(ownerSession)
                + " (" + ownerName + "), deadline=" + deadline + "]";
    }
}
