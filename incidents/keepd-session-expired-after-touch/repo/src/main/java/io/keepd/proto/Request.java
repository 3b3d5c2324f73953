package io.keepd.proto;

import java.util.concurrent.CompletableFuture;

/** A decoded client request together with the future its response is delivered through. */
public final class Request {
    private final long xid;
    private final OpCode op;
    private final long sessionId;
    private final String lease;
    private final String owner;
    private final int timeoutMs;
    private final long receivedAt;
    private final CompletableFuture<Response> reply = new CompletableFuture<>();

    private Request(long xid, OpCode op, long sessionId, String lease, String owner, int timeoutMs, long receivedAt) {
        this.xid = xid;
        this.op = op;
        this.sessionId = sessionId;
        this.lease = lease;
        this.owner = owner;
        this.timeoutMs = timeoutMs;
        this.receivedAt = receivedAt;
    }

    public static Request createSession(long xid, String owner, int timeoutMs, long now) {
        return new Request(xid, OpCode.CREATE_SESSION, 0L, null, owner, timeoutMs, now);
    }

    public static Request forSession(long xid, OpCode op, long sessionId, String lease, long now) {
        return new Request(xid, op, sessionId, lease, null, 0, now);
    }

    public long xid() {
        return xid;
    }

    public OpCode op() {
        return op;
    }

    public long sessionId() {
        return sessionId;
    }

    public String lease() {
        return lease;
    }

    public String owner() {
        return owner;
    }

    public int timeoutMs() {
        return timeoutMs;
    }

    public long receivedAt() {
        return receivedAt;
    }

    public CompletableFuture<Response> reply() {
        return reply;
    }

    @Override
    public String toString() {
        return op + "(xid=" + xid + ", session=0x" + Long.toHexString(sessionId)
                + (lease != null ? ", lease=" + lease : "") + ")";
    }
}
