package io.tidelog.replication

import com.typesafe.scalalogging.StrictLogging
import io.tidelog.log.{EpochEndOffsets, ReplicaLog}
import io.tidelog.state.KvStateMachine

import java.util.concurrent.atomic.AtomicBoolean
import scala.concurrent.Await
import scala.concurrent.duration._
import scala.util.control.NonFatal

/**
 * Follower side of replication. After a leader change it first reconciles its log with the new
 * leader (truncating anything the leader does not have), then fetches continuously.
 */
class ReplicaFetcher(
    nodeId: Int,
    leader: PeerClient,
    leaderEpoch: Int,
    log: ReplicaLog,
    stateMachine: KvStateMachine,
    fetchMaxEntries: Int,
    backoffMs: Long)
    extends Thread(s"replica-fetcher-$nodeId-to-${leader.peerId}")
    with StrictLogging {

  private val running = new AtomicBoolean(true)
  @volatile private var needsReconcile = true
  @volatile private var pendingCheckpoint: Option[DigestCheckpoint] = None
  private val requestTimeout = 5.seconds

  setDaemon(true)

  override def run(): Unit = {
    logger.info(s"Became follower of node-${leader.peerId} in epoch $leaderEpoch; local log end offset " +
      s"${log.logEndOffset}, latest local epoch ${log.latestEpoch.getOrElse(-1)}")
    while (running.get()) {
      try {
        if (needsReconcile) reconcile()
        else fetchOnce()
      } catch {
        case e: PeerUnreachableException =>
          logger.warn(s"Fetch from node-${leader.peerId} failed: ${e.getMessage}; retrying in $backoffMs ms")
          Thread.sleep(backoffMs)
        case _: InterruptedException =>
          running.set(false)
        case NonFatal(e) =>
          logger.error(s"Error in fetcher for ${log.name} from node-${leader.peerId}", e)
          Thread.sleep(backoffMs)
      }
    }
    logger.info(s"Stopped fetching ${log.name} from node-${leader.peerId}")
  }

  /** Finds where the local log diverges from the leader's and truncates it there. */
  private def reconcile(): Unit = {
    log.latestEpoch match {
      case None =>
        logger.info(s"Local log ${log.name} is empty, no truncation needed")
      case Some(localEpoch) =>
        val resp = Await.result(
          leader.epochEndOffset(EpochEndOffsetRequest(nodeId, leaderEpoch, localEpoch)), requestTimeout)
        resp.error match {
          case ReplicationError.None =>
            val localEnd = log.logEndOffset
            if (resp.endOffset == EpochEndOffsets.UndefinedOffset) {
              logger.warn(s"Leader node-${leader.peerId} has no end offset for epoch $localEpoch; truncating to high watermark ${log.highWatermark}")
              log.truncateTo(log.highWatermark)
            } else {
              val target = math.min(resp.endOffset, localEnd)
              logger.info(s"Leader node-${leader.peerId} reports epoch ${resp.epoch} ends at offset ${resp.endOffset}; " +
                s"truncating ${log.name} to $target (local end offset $localEnd)")
              log.truncateTo(target)
            }
          case ReplicationError.FencedLeaderEpoch =>
            logger.warn(s"Leader epoch $leaderEpoch is fenced by node-${leader.peerId}; stopping fetcher")
            running.set(false)
            return
          case other =>
            logger.warn(s"Epoch end offset request to node-${leader.peerId} failed with $other")
            Thread.sleep(backoffMs)
            return
        }
    }
    needsReconcile = false
    logger.info(s"Fetching ${log.name} from node-${leader.peerId} at offset ${log.logEndOffset}")
  }

  private def fetchOnce(): Unit = {
    val fetchOffset = log.logEndOffset
    val resp = Await.result(
      leader.fetch(FetchRequest(nodeId, leaderEpoch, fetchOffset, fetchMaxEntries)), requestTimeout)
    resp.error match {
      case ReplicationError.None =>
        if (resp.entries.nonEmpty) log.appendAsFollower(resp.entries)
        log.maybeIncrementHighWatermark(resp.highWatermark)
        resp.checkpoint.foreach(cp => if (cp.offset > stateMachine.appliedOffset) pendingCheckpoint = Some(cp))
        applyCommitted()
        if (resp.entries.isEmpty) Thread.sleep(backoffMs)
      case ReplicationError.OffsetOutOfRange =>
        logger.warn(s"Fetch offset $fetchOffset out of range on node-${leader.peerId}; reconciling")
        needsReconcile = true
      case ReplicationError.FencedLeaderEpoch | ReplicationError.NotLeader =>
        logger.info(s"node-${leader.peerId} is no longer leader of epoch $leaderEpoch (${resp.error}); stopping fetcher")
        running.set(false)
      case other =>
        logger.warn(s"Fetch from node-${leader.peerId} returned $other")
        Thread.sleep(backoffMs)
    }
  }

  private def applyCommitted(): Unit = {
    val hw = log.highWatermark
    while (stateMachine.appliedOffset < hw) {
      val next = stateMachine.appliedOffset
      log.entryAt(next) match {
        case Some(entry) => stateMachine.apply(entry)
        case None =>
          throw new IllegalStateException(s"Committed offset $next missing from ${log.name}")
      }
      pendingCheckpoint.foreach(verify)
    }
  }

  private def verify(cp: DigestCheckpoint): Unit =
    if (stateMachine.appliedOffset == cp.offset) {
      pendingCheckpoint = None
      stateMachine.checkpointAt(cp.offset) match {
        case Some(local) if local == cp.digest =>
          logger.info(s"State digest at offset ${cp.offset} matches leader node-${leader.peerId} ($local)")
        case Some(local) =>
          logger.error(s"State digest mismatch at offset ${cp.offset}: local $local, leader node-${leader.peerId} " +
            s"${cp.digest}; this replica has diverged from the leader")
        case None =>
          logger.warn(s"No local checkpoint at offset ${cp.offset} to compare with leader")
      }
    }

  def shutdown(): Unit = {
    running.set(false)
    interrupt()
  }
}
