package io.tidelog.replication

import com.typesafe.scalalogging.StrictLogging
import io.tidelog.log.ReplicaLog

import scala.collection.mutable

/**
 * Book-keeping a leader keeps about its followers: how far each has fetched, which ones are
 * in sync, and from that the high watermark.
 */
class LeaderState(nodeId: Int, val epoch: Int, log: ReplicaLog, followers: Set[Int], maxLagMs: Long)
    extends StrictLogging {
  private final case class FollowerProgress(logEndOffset: Long, lastCaughtUpMs: Long)

  private val progress = mutable.HashMap.empty[Int, FollowerProgress]
  private val inSync = mutable.Set.empty[Int] ++ followers

  followers.foreach(f => progress.update(f, FollowerProgress(0L, System.currentTimeMillis())))

  def isr: Set[Int] = synchronized(inSync.toSet + nodeId)

  /** Records that `follower` has everything below `fetchOffset`; returns true if the HW moved. */
  def onFollowerFetch(follower: Int, fetchOffset: Long, now: Long): Boolean = synchronized {
    val leo = log.logEndOffset
    val prev = progress.getOrElse(follower, FollowerProgress(0L, now))
    val caughtUp = if (fetchOffset >= leo) now else prev.lastCaughtUpMs
    progress.update(follower, FollowerProgress(fetchOffset, caughtUp))
    if (!inSync.contains(follower) && fetchOffset >= log.highWatermark) {
      inSync += follower
      logger.info(s"Expanding ISR of ${log.name} in epoch $epoch to ${isr.toList.sorted.mkString(",")}")
    }
    maybeAdvanceHighWatermark()
  }

  def shrinkIsrIfNeeded(now: Long): Unit = synchronized {
    val lagging = inSync.filter(f => now - progress(f).lastCaughtUpMs > maxLagMs)
    if (lagging.nonEmpty) {
      inSync --= lagging
      logger.warn(s"Shrinking ISR of ${log.name} in epoch $epoch: removed ${lagging.toList.sorted.mkString(",")} " +
        s"(lag > $maxLagMs ms), ISR now ${isr.toList.sorted.mkString(",")}")
      maybeAdvanceHighWatermark()
    }
  }

  private def maybeAdvanceHighWatermark(): Boolean = {
    val offsets = inSync.toList.map(f => progress(f).logEndOffset) :+ log.logEndOffset
    log.maybeIncrementHighWatermark(offsets.min)
  }
}
