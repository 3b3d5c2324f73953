package io.keepd.server;

import io.keepd.lease.LeaseStore;
import io.keepd.proto.OpCode;
import io.keepd.proto.Request;
import io.keepd.proto.Response;
import io.keepd.session.Session;
import io.keepd.session.SessionTracker;
import io.keepd.util.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Executes client requests. Several processors run side by side; requests of one session are
 * always routed to the same processor so they are applied in order.
 */
public class RequestProcessor extends Thread {
    private static final Logger LOG = LoggerFactory.getLogger(RequestProcessor.class);
    private static final long SLOW_REQUEST_MS = 500;

    private final BlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final SessionTracker sessions;
    private final LeaseStore leases;
    private final Clock clock;
    private volatile boolean running = true;

    public RequestProcessor(int index, SessionTracker sessions, LeaseStore leases, Clock clock) {
        super("RequestProcessor-" + index);
        setDaemon(true);
        this.sessions = sessions;
        this.leases = leases;
        this.clock = clock;
    }

    public void submit(Request r) {
        queue.add(r);
    }

    public int backlog() {
        return queue.size();
    }

    @Override
    public void run() {
        while (running) {
            Request r;
            try {
                r = queue.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (r == null) {
                continue;
            }
            Response resp;
            try {
                resp = process(r);
            } catch (RuntimeException e) {
                LOG.error("Error processing {}", r, e);
                resp = Response.of(r, Response.Code.INTERNAL_ERROR);
            }
            long took = clock.nowMillis() - r.receivedAt();
            if (took > SLOW_REQUEST_MS) {
                LOG.warn("Slow request {}: {}ms in queue and processing", r, took);
            }
            r.reply().complete(resp);
        }
    }

    Response process(Request r) {
        switch (r.op()) {
            case CREATE_SESSION:
                Session s = sessions.createSession(r.owner(), r.timeoutMs());
                return new Response(r.xid(), Response.Code.OK, s.getId(), s.getTimeoutMs());
            case PING:
                return processPing(r);
            case ACQUIRE:
                return processAcquire(r);
            case RENEW:
                return processRenew(r);
            case RELEASE:
                leases.release(r.sessionId(), r.lease());
                return Response.of(r, Response.Code.OK);
            case CLOSE_SESSION:
                sessions.closeSession(r.sessionId());
                return Response.of(r, Response.Code.OK);
            default:
                throw new IllegalArgumentException("Unknown op " + r.op());
        }
    }

    private Response processPing(Request r) {
        if (!sessions.touchSession(r.sessionId())) {
            return Response.of(r, Response.Code.SESSION_EXPIRED);
        }
        return Response.of(r, Response.Code.OK);
    }

    private Response processAcquire(Request r) {
        if (!sessions.touchSession(r.sessionId())) {
            return Response.of(r, Response.Code.SESSION_EXPIRED);
        }
        LeaseStore.Outcome o = leases.acquire(r.sessionId(), r.lease());
        switch (o) {
            case GRANTED:
            case RENEWED:
                return Response.of(r, Response.Code.OK);
            case HELD_BY_OTHER:
                return Response.of(r, Response.Code.LEASE_HELD);
            default:
                return Response.of(r, Response.Code.SESSION_EXPIRED);
        }
    }

    private Response processRenew(Request r) {
        if (!sessions.touchSession(r.sessionId())) {
            LOG.debug("Renew of {} for expired session 0x{}", r.lease(), Long.toHexString(r.sessionId()));
            return Response.of(r, Response.Code.SESSION_EXPIRED);
        }
        LeaseStore.Outcome o = leases.renew(r.sessionId(), r.lease());
        return Response.of(r, o == LeaseStore.Outcome.RENEWED ? Response.Code.OK : Response.Code.NOT_HOLDER);
    }

    public void shutdown() {
        running = false;
        interrupt();
    }
}
