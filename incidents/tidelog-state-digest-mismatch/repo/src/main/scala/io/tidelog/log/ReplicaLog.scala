package io.tidelog.log

import com.typesafe.scalalogging.StrictLogging

import scala.collection.mutable.ArrayBuffer

/**
 * The local copy of the replicated log. Entries are kept in memory; durability is provided by
 * replication. The high watermark is the first offset that is not yet known to be committed.
 */
class ReplicaLog(val name: String, val epochCache: LeaderEpochCache) extends StrictLogging {
  private val lock = new Object
  private val entries = ArrayBuffer.empty[LogEntry]
  private var startOffset: Long = 0L
  @volatile private var hw: Long = 0L

  def logStartOffset: Long = lock.synchronized(startOffset)

  def logEndOffset: Long = lock.synchronized(endOffsetUnlocked)

  private def endOffsetUnlocked: Long = startOffset + entries.length

  def highWatermark: Long = hw

  def latestEpoch: Option[Int] = epochCache.latestEpoch

  def appendAsLeader(epoch: Int, payload: Array[Byte]): LogEntry = lock.synchronized {
    val entry = LogEntry(endOffsetUnlocked, epoch, payload)
    epochCache.assign(epoch, entry.offset)
    entries += entry
    entry
  }

  def appendAsFollower(batch: Seq[LogEntry]): Unit = lock.synchronized {
    batch.foreach { entry =>
      val expected = endOffsetUnlocked
      if (entry.offset != expected) {
        throw new IllegalStateException(
          s"Out of order append to $name: expected offset $expected but got ${entry.offset}")
      }
      epochCache.assign(entry.epoch, entry.offset)
      entries += entry
    }
  }

  def read(from: Long, maxEntries: Int): Seq[LogEntry] = lock.synchronized {
    if (from < startOffset || from > endOffsetUnlocked) {
      throw new OffsetOutOfRangeException(
        s"Offset $from is out of range for $name [$startOffset, $endOffsetUnlocked)")
    }
    val idx = (from - startOffset).toInt
    entries.slice(idx, idx + maxEntries).toList
  }

  def entryAt(offset: Long): Option[LogEntry] = lock.synchronized {
    if (offset < startOffset || offset >= endOffsetUnlocked) None
    else Some(entries((offset - startOffset).toInt))
  }

  /** Moves the high watermark forward, never past the log end offset. Returns true if it moved. */
  def maybeIncrementHighWatermark(candidate: Long): Boolean = lock.synchronized {
    val bounded = math.min(candidate, endOffsetUnlocked)
    if (bounded > hw) {
      hw = bounded
      true
    } else false
  }

  /**
   * Removes every entry at or after `offset` so that the next append goes to `offset`.
   * Used by followers to drop entries that diverge from the leader.
   */
  def truncateTo(offset: Long): Int = lock.synchronized {
    val removed =
      if (offset >= endOffsetUnlocked) 0
      else {
        val cut = entries.indexWhere(_.offset > offset)
        if (cut < 0) 0
        else {
          val n = entries.length - cut
          entries.remove(cut, n)
          n
        }
      }
    epochCache.truncateFromEnd(offset)
    if (hw > endOffsetUnlocked) hw = endOffsetUnlocked
    logger.info(s"Truncated $removed entries from $name; log end offset now $endOffsetUnlocked")
    removed
  }

  /** Drops entries below `offset` once they are covered by a state snapshot. */
  def truncateFromStart(offset: Long): Unit = lock.synchronized {
    val drop = math.max(0L, math.min(offset, hw) - startOffset).toInt
    if (drop > 0) {
      entries.remove(0, drop)
      startOffset += drop
      epochCache.truncateFromStart(startOffset)
      logger.debug(s"Log start offset of $name is now $startOffset")
    }
  }
}
