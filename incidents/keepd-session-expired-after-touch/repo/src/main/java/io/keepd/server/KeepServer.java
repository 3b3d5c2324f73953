package io.keepd.server;

import io.keepd.lease.Journal;
import io.keepd.lease.LeaseStore;
import io.keepd.proto.OpCode;
import io.keepd.proto.Request;
import io.keepd.proto.Response;
import io.keepd.session.Session;
import io.keepd.session.SessionExpirer;
import io.keepd.session.SessionTracker;
import io.keepd.util.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Wires the session tracker, lease store and request processors into one server. */
public class KeepServer implements SessionExpirer, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KeepServer.class);

    private final long serverId;
    private final Clock clock;
    private final SessionTracker tracker;
    private final LeaseStore leases;
    private final Journal journal;
    private final RequestProcessor[] processors;
    private final ScheduledExecutorService stats;
    private final AtomicLong expiredSessions = new AtomicLong();
    private final AtomicLong xids = new AtomicLong();

    public KeepServer(long serverId, Path dataDir, int tickTime, int processorCount, Clock clock) throws IOException {
        this.serverId = serverId;
        this.clock = clock;
        this.journal = new Journal(dataDir.resolve("leases.journal"));
        this.tracker = new SessionTracker(this, tickTime, serverId, clock);
        this.leases = new LeaseStore(tracker, journal, clock);
        this.processors = new RequestProcessor[processorCount];
        for (int i = 0; i < processorCount; i++) {
            processors[i] = new RequestProcessor(i, tracker, leases, clock);
        }
        this.stats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "StatsReporter");
            t.setDaemon(true);
            return t;
        });
    }

    public void start() {
        tracker.start();
        for (RequestProcessor p : processors) {
            p.start();
        }
        stats.scheduleAtFixedRate(this::reportStats, 30, 30, TimeUnit.SECONDS);
        LOG.info("keepd server {} started with {} request processors", serverId, processors.length);
    }

    @Override
    public void expire(Session session) {
        expiredSessions.incrementAndGet();
        int released = leases.releaseAll(session.getId());
        LOG.debug("Session {} of {} expired, {} lease(s) released", session.hexId(), session.getOwner(), released);
    }

    /** Entry point used by the network layer for every decoded request. */
    public CompletableFuture<Response> submit(Request r) {
        long key = r.op() == OpCode.CREATE_SESSION ? r.xid() : r.sessionId();
        int idx = (int) Math.floorMod(key, (long) processors.length);
        processors[idx].submit(r);
        return r.reply();
    }

    public CompletableFuture<Response> call(OpCode op, long sessionId, String lease) {
        return submit(Request.forSession(xids.incrementAndGet(), op, sessionId, lease, clock.nowMillis()));
    }

    public CompletableFuture<Response> openSession(String owner, int timeoutMs) {
        return submit(Request.createSession(xids.incrementAndGet(), owner, timeoutMs, clock.nowMillis()));
    }

    private void reportStats() {
        int backlog = 0;
        for (RequestProcessor p : processors) {
            backlog += p.backlog();
        }
        LOG.info("stats: sessions={} leases={} journalEntries={} expired={} backlog={}",
                tracker.openSessions().size(), leases.size(), journal.size(), expiredSessions.get(), backlog);
    }

    @Override
    public void close() throws IOException {
        stats.shutdownNow();
        for (RequestProcessor p : processors) {
            p.shutdown();
        }
        tracker.shutdown();
        journal.close();
        LOG.info("keepd server {} stopped", serverId);
    }

    public static void main(String[] args) throws Exception {
        long id = args.length > 0 ? Long.parseLong(args[0]) : 1L;
        Path dir = Paths.get(args.length > 1 ? args[1] : "/var/lib/keepd");
        int tick = Integer.getInteger("keepd.tickTime", 2000);
        int procs = Integer.getInteger("keepd.processors", 4);
        KeepServer server = new KeepServer(id, dir, tick, procs, Clock.SYSTEM);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (IOException e) {
                LOG.warn("Error during shutdown", e);
            }
        }, "shutdown-hook"));
        server.start();
        Thread.currentThread().join();
    }
}
