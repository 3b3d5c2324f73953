package io.keepd.session;

import io.keepd.util.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps track of open sessions and expires the ones that have not been touched within
 * their timeout. Runs as a single background thread.
 */
public class SessionTracker extends Thread {
    private static final Logger LOG = LoggerFactory.getLogger(SessionTracker.class);

    private final ConcurrentHashMap<Long, Session> sessionsById = new ConcurrentHashMap<>();
    private final ExpiryQueue<Session> sessionExpiryQueue;
    private final SessionExpirer expirer;
    private final Clock clock;
    private final AtomicLong nextSessionId;
    private final int minSessionTimeout;
    private final int maxSessionTimeout;
    private volatile boolean running = true;

    public SessionTracker(SessionExpirer expirer, int tickTime, long serverId, Clock clock) {
        super("SessionTracker");
        setDaemon(true);
        this.expirer = expirer;
        this.clock = clock;
        this.sessionExpiryQueue = new ExpiryQueue<>(tickTime, clock);
        this.nextSessionId = new AtomicLong(initializeNextSessionId(serverId, clock.nowMillis()));
        this.minSessionTimeout = tickTime * 2;
        this.maxSessionTimeout = tickTime * 20;
    }

    /** Session ids carry the server id in the top byte so they never collide across servers. */
    static long initializeNextSessionId(long serverId, long now) {
        long nextSid = (now << 24) >>> 8;
        nextSid = nextSid | (serverId << 56);
        return nextSid;
    }

    @Override
    public void run() {
        LOG.info("SessionTracker started, tick {}ms, session timeout range [{}, {}]ms",
                maxSessionTimeout / 20, minSessionTimeout, maxSessionTimeout);
        try {
            while (running) {
                long waitTime = sessionExpiryQueue.getWaitTime();
                if (waitTime > 0) {
                    Thread.sleep(waitTime);
                    continue;
                }
                Set<Session> due = sessionExpiryQueue.poll();
                if (!due.isEmpty()) {
                    LOG.debug("{} session(s) due for expiry, next bucket at {}", due.size(),
                            sessionExpiryQueue.nextExpirationTime());
                }
                for (Session s : due) {
                    expireSession(s);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.info("SessionTracker interrupted, exiting");
        } catch (RuntimeException e) {
            LOG.error("Unexpected exception in SessionTracker, sessions will no longer expire", e);
        }
    }

    private void expireSession(Session s) {
        s.setState(Session.State.CLOSING);
        LOG.info("Expiring session {}, timeout of {}ms exceeded", s.hexId(), s.getTimeoutMs());
        sessionsById.remove(s.getId());
        sessionExpiryQueue.remove(s);
        expirer.expire(s);
        s.setState(Session.State.CLOSED);
    }

    public int clampTimeout(int requested) {
        if (requested < minSessionTimeout) {
            return minSessionTimeout;
        }
        return Math.min(requested, maxSessionTimeout);
    }

    public Session createSession(String owner, int requestedTimeout) {
        int timeout = clampTimeout(requestedTimeout);
        long id = nextSessionId.getAndIncrement();
        Session s = new Session(id, owner, timeout);
        sessionsById.put(id, s);
        updateSessionExpiry(s);
        LOG.info("Created session {} for {} with timeout {}ms", s.hexId(), owner, timeout);
        return s;
    }

    /**
     * Pushes the session's deadline out by its timeout.
     *
     * @return false if the session is unknown or already being closed
     */
    public boolean touchSession(long sessionId) {
        Session s = sessionsById.get(sessionId);
        if (s == null) {
            LOG.debug("Touch for unknown session 0x{}", Long.toHexString(sessionId));
            return false;
        }
        if (s.isClosing()) {
            LOG.debug("Touch for closing session {}", s.hexId());
            return false;
        }
        updateSessionExpiry(s);
        return true;
    }

    private void updateSessionExpiry(Session s) {
        Long bucket = sessionExpiryQueue.update(s, s.getTimeoutMs());
        if (bucket != null) {
            s.setExpiryTime(bucket);
            if (LOG.isTraceEnabled()) {
                LOG.trace("Session {} now expires at {}", s.hexId(), bucket);
            }
        }
    }

    /** Explicit close requested by the client. */
    public void closeSession(long sessionId) {
        Session s = sessionsById.remove(sessionId);
        if (s == null) {
            return;
        }
        s.setState(Session.State.CLOSING);
        sessionExpiryQueue.remove(s);
        LOG.info("Closed session {} at client request", s.hexId());
        expirer.expire(s);
        s.setState(Session.State.CLOSED);
    }

    public Session getSession(long sessionId) {
        return sessionsById.get(sessionId);
    }

    public Collection<Session> openSessions() {
        List<Session> out = new ArrayList<>();
        for (Session s : sessionsById.values()) {
            if (!s.isClosing()) {
                out.add(s);
            }
        }
        return out;
    }

    public void shutdown() {
        running = false;
        interrupt();
        LOG.info("SessionTracker shutdown, {} open sessions", sessionsById.size());
    }
}
