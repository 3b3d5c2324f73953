package io.keepd.lease;

import io.keepd.session.Session;
import io.keepd.session.SessionTracker;
import io.keepd.util.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns the table of leases. A lease lives at most as long as the session that holds it;
 * its deadline is advanced on every renewal.
 */
public class LeaseStore {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseStore.class);

    private final Map<String, Lease> leases = new ConcurrentHashMap<>();
    private final SessionTracker sessions;
    private final Journal journal;
    private final Clock clock;
    private final AtomicLong versions = new AtomicLong();

    public LeaseStore(SessionTracker sessions, Journal journal, Clock clock) {
        this.sessions = sessions;
        this.journal = journal;
        this.clock = clock;
    }

    public enum Outcome {
        GRANTED,
        RENEWED,
        HELD_BY_OTHER,
        NOT_HELD
    }

    public synchronized Outcome acquire(long sessionId, String name) {
        Session session = sessions.getSession(sessionId);
        if (session == null || session.isClosing()) {
            return Outcome.NOT_HELD;
        }
        Lease current = leases.get(name);
        if (current != null) {
            if (current.getOwnerSession() == sessionId) {
                return Outcome.RENEWED;
            }
            LOG.debug("Lease {} requested by {} is held by {}", name, session.hexId(), current.getOwnerName());
            return Outcome.HELD_BY_OTHER;
        }
        long now = clock.nowMillis();
        long version = versions.incrementAndGet();
        journal.append("GRANT", name, sessionId, version);
        Lease lease = new Lease(name, sessionId, session.getOwner(), now, now + session.getTimeoutMs(), version);
        leases.put(name, lease);
        LOG.info("Granted lease {} v{} to session {} ({})", name, version, session.hexId(), session.getOwner());
        return Outcome.GRANTED;
    }

    public synchronized Outcome renew(long sessionId, String name) {
        Session session = sessions.getSession(sessionId);
        long now = clock.nowMillis();
        long newDeadline = now + session.getTimeoutMs();
        Lease lease = leases.get(name);
        if (lease == null || lease.getOwnerSession() != sessionId) {
            LOG.debug("Renew of {} by {} rejected, not the holder", name, session.hexId());
            return Outcome.NOT_HELD;
        }
        lease.extendTo(newDeadline);
        return Outcome.RENEWED;
    }

    public synchronized Outcome release(long sessionId, String name) {
        Lease lease = leases.get(name);
        if (lease == null || lease.getOwnerSession() != sessionId) {
            return Outcome.NOT_HELD;
        }
        journal.append("RELEASE", name, sessionId, lease.getVersion());
        leases.remove(name);
        LOG.info("Released lease {} v{} held by 0x{}", name, lease.getVersion(), Long.toHexString(sessionId));
        return Outcome.RENEWED;
    }

    /** Releases every lease owned by a session that has gone away. */
    public synchronized int releaseAll(long sessionId) {
        List<Lease> owned = new ArrayList<>();
        for (Lease l : leases.values()) {
            if (l.getOwnerSession() == sessionId) {
                owned.add(l);
            }
        }
        for (Lease l : owned) {
            journal.append("RELEASE", l.getName(), sessionId, l.getVersion());
            leases.remove(l.getName());
        }
        if (!owned.isEmpty()) {
            LOG.info("Released {} lease(s) of dead session 0x{}: {}", owned.size(), Long.toHexString(sessionId),
                    names(owned));
        }
        return owned.size();
    }

    private static List<String> names(List<Lease> ls) {
        List<String> out = new ArrayList<>(ls.size());
        for (Lease l : ls) {
            out.add(l.getName());
        }
        return out;
    }

    public Lease get(String name) {
        return leases.get(name);
    }

    public int size() {
        return leases.size();
    }
}
