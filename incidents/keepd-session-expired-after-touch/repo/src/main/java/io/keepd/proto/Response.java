package io.keepd.proto;

public final class Response {
    public enum Code {
        OK,
        SESSION_EXPIRED,
        LEASE_HELD,
        NOT_HOLDER,
        INTERNAL_ERROR
    }

    private final long xid;
    private final Code code;
    private final long sessionId;
    private final int timeoutMs;

    public Response(long xid, Code code, long sessionId, int timeoutMs) {
        this.xid = xid;
        this.code = code;
        this.sessionId = sessionId;
        this.timeoutMs = timeoutMs;
    }

    public static Response of(Request r, Code code) {
        return new Response(r.xid(), code, r.sessionId(), 0);
    }

    public long xid() {
        return xid;
    }

    public Code code() {
        return code;
    }

    public long sessionId() {
        return sessionId;
    }

    public int timeoutMs() {
        return timeoutMs;
    }

    @Override
    public String toString() {
        return "Response(xid=" + xid + ", " + code + ")";
    }
}
