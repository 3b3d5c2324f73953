package io.tidelog.server

import com.typesafe.scalalogging.StrictLogging
import io.tidelog.log.{LeaderEpochCache, OffsetOutOfRangeException, ReplicaLog}
import io.tidelog.replication._
import io.tidelog.state.{Command, KvStateMachine}

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}
import scala.concurrent.{Future, Promise}

final case class NodeConfig(
    nodeId: Int,
    peers: Set[Int],
    fetchMaxEntries: Int = 500,
    fetchBackoffMs: Long = 50L,
    replicaMaxLagMs: Long = 10000L,
    digestInterval: Long = 10000L)

sealed trait Role
case object Leader extends Role
final case class Follower(leaderId: Int) extends Role
case object Offline extends Role

/** One replica: its log, its state machine, and whichever role the controller gave it. */
class ReplicaNode(config: NodeConfig, transport: InMemoryTransport) extends ReplicationHandler with StrictLogging {
  val nodeId: Int = config.nodeId
  private val logName = s"tidelog-0@node-$nodeId"
  val log = new ReplicaLog(logName, new LeaderEpochCache(logName))
  val stateMachine = new KvStateMachine(nodeId, config.digestInterval)

  @volatile private var role: Role = Offline
  @volatile private var currentEpoch: Int = 0
  @volatile private var leaderState: Option[LeaderState] = None
  @volatile private var fetcher: Option[ReplicaFetcher] = None
  private val pendingWrites = new java.util.concurrent.ConcurrentSkipListMap[java.lang.Long, Promise[Long]]()
  private val scheduler: ScheduledExecutorService = Executors.newSingleThreadScheduledExecutor()

  scheduler.scheduleAtFixedRate(() => maintenance(), 1, 1, TimeUnit.SECONDS)

  def epoch: Int = currentEpoch

  def currentRole: Role = role

  def becomeLeader(newEpoch: Int): Unit = synchronized {
    stopFetcher()
    currentEpoch = newEpoch
    role = Leader
    leaderState = Some(new LeaderState(nodeId, newEpoch, log, config.peers - nodeId, config.replicaMaxLagMs))
    log.appendAsLeader(newEpoch, Command.encode(Command.Noop))
    logger.info(s"node-$nodeId is now leader of $logName in epoch $newEpoch; log end offset ${log.logEndOffset}, " +
      s"high watermark ${log.highWatermark}")
  }

  def becomeFollower(leaderId: Int, newEpoch: Int): Unit = synchronized {
    stopFetcher()
    leaderState = None
    currentEpoch = newEpoch
    role = Follower(leaderId)
    failPendingWrites()
    val f = new ReplicaFetcher(nodeId, transport.client(nodeId, leaderId), newEpoch, log, stateMachine,
      config.fetchMaxEntries, config.fetchBackoffMs)
    fetcher = Some(f)
    f.start()
  }

  def shutdown(): Unit = synchronized {
    stopFetcher()
    role = Offline
    leaderState = None
    failPendingWrites()
    scheduler.shutdownNow()
    logger.info(s"node-$nodeId shut down at log end offset ${log.logEndOffset}")
  }

  private def stopFetcher(): Unit = {
    fetcher.foreach(_.shutdown())
    fetcher = None
  }

  private def failPendingWrites(): Unit = {
    val it = pendingWrites.values().iterator()
    while (it.hasNext) it.next().tryFailure(new IllegalStateException(s"node-$nodeId is no longer leader"))
    pendingWrites.clear()
  }

  /** Appends a command as leader; the future completes once the entry is committed. */
  def write(cmd: Command): Future[Long] = synchronized {
    role match {
      case Leader =>
        val entry = log.appendAsLeader(currentEpoch, Command.encode(cmd))
        val p = Promise[Long]()
        pendingWrites.put(entry.offset, p)
        p.future
      case _ =>
        Future.failed(new IllegalStateException(s"node-$nodeId is not the leader"))
    }
  }

  def read(key: String): Option[String] = stateMachine.get(key)

  override def handleFetch(req: FetchRequest): FetchResponse = {
    val ls = leaderState
    if (role != Leader || ls.isEmpty) FetchResponse.error(ReplicationError.NotLeader, currentEpoch)
    else if (req.leaderEpoch < currentEpoch) FetchResponse.error(ReplicationError.FencedLeaderEpoch, currentEpoch)
    else if (req.leaderEpoch > currentEpoch) FetchResponse.error(ReplicationError.UnknownLeaderEpoch, currentEpoch)
    else {
      try {
        val entries = log.read(req.fetchOffset, req.maxEntries)
        if (ls.get.onFollowerFetch(req.replicaId, req.fetchOffset, System.currentTimeMillis())) applyCommitted()
        FetchResponse(ReplicationError.None, currentEpoch, entries, log.highWatermark,
          stateMachine.latestCheckpoint.map { case (o, d) => DigestCheckpoint(o, d) })
      } catch {
        case e: OffsetOutOfRangeException =>
          logger.warn(s"Fetch from node-${req.replicaId}: ${e.getMessage}")
          FetchResponse.error(ReplicationError.OffsetOutOfRange, currentEpoch)
      }
    }
  }

  override def handleEpochEndOffset(req: EpochEndOffsetRequest): EpochEndOffsetResponse = {
    if (role != Leader) EpochEndOffsetResponse(ReplicationError.NotLeader, -1, -1L)
    else if (req.leaderEpoch < currentEpoch) EpochEndOffsetResponse(ReplicationError.FencedLeaderEpoch, -1, -1L)
    else {
      val (e, end) = log.epochCache.endOffsetFor(req.requestedEpoch, log.logEndOffset)
      logger.debug(s"Epoch end offset for epoch ${req.requestedEpoch} requested by node-${req.replicaId}: ($e, $end)")
      EpochEndOffsetResponse(ReplicationError.None, e, end)
    }
  }

  private def applyCommitted(): Unit = synchronized {
    val hw = log.highWatermark
    while (stateMachine.appliedOffset < hw) {
      val offset = stateMachine.appliedOffset
      log.entryAt(offset).foreach(stateMachine.apply)
      Option(pendingWrites.remove(offset)).foreach(_.trySuccess(offset))
    }
  }

  private def maintenance(): Unit = {
    leaderState.foreach { ls =>
      ls.shrinkIsrIfNeeded(System.currentTimeMillis())
      applyCommitted()
    }
  }

  def isr: Set[Int] = leaderState.map(_.isr).getOrElse(Set.empty)
}
