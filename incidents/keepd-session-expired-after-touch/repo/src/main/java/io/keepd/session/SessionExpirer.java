package io.keepd.session;

/** Callback invoked by the tracker when a session has timed out. */
public interface SessionExpirer {
    void expire(Session session);
}
