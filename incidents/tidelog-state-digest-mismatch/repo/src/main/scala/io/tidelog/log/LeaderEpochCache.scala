package io.tidelog.log

import com.typesafe.scalalogging.StrictLogging

import scala.collection.mutable.ArrayBuffer

final case class EpochEntry(epoch: Int, startOffset: Long)

/**
 * Remembers, for every leader epoch seen by this replica, the first offset written in it.
 * Used to answer "where does epoch N end?" when a follower has to find the point at which
 * its log diverges from the leader's.
 */
class LeaderEpochCache(logName: String) extends StrictLogging {
  private val epochs = ArrayBuffer.empty[EpochEntry]

  def assign(epoch: Int, startOffset: Long): Unit = synchronized {
    epochs.lastOption match {
      case Some(last) if last.epoch == epoch => ()
      case Some(last) if last.epoch > epoch =>
        logger.warn(s"Ignoring epoch $epoch at offset $startOffset for $logName: latest known epoch is ${last.epoch}")
      case Some(last) if last.startOffset > startOffset =>
        logger.warn(s"Epoch $epoch starts at $startOffset for $logName, before epoch ${last.epoch} (${last.startOffset}); dropping later entries")
        epochs.filterInPlace(_.startOffset < startOffset)
        epochs += EpochEntry(epoch, startOffset)
      case _ =>
        epochs += EpochEntry(epoch, startOffset)
        logger.info(s"Epoch $epoch starts at offset $startOffset in $logName")
    }
  }

  def latestEpoch: Option[Int] = synchronized(epochs.lastOption.map(_.epoch))

  def entries: Seq[EpochEntry] = synchronized(epochs.toList)

  /**
   * The end offset (exclusive) of `requested` as known by this replica: the start offset of the
   * first later epoch, or the log end offset if `requested` is the current epoch. If the
   * requested epoch itself is unknown, answers for the largest known epoch below it.
   */
  def endOffsetFor(requested: Int, logEndOffset: Long): (Int, Long) = synchronized {
    if (epochs.isEmpty || requested < epochs.head.epoch) {
      (EpochEndOffsets.UndefinedEpoch, EpochEndOffsets.UndefinedOffset)
    } else if (requested >= epochs.last.epoch) {
      (epochs.last.epoch, logEndOffset)
    } else {
      val nextIdx = epochs.indexWhere(_.epoch > requested)
      (epochs(nextIdx - 1).epoch, epochs(nextIdx).startOffset)
    }
  }

  /** Forgets every epoch that starts at or after `offset`. */
  def truncateFromEnd(offset: Long): Unit = synchronized {
    val before = epochs.length
    epochs.filterInPlace(_.startOffset < offset)
    if (epochs.length != before) {
      logger.info(s"Removed ${before - epochs.length} epoch entries at or after offset $offset from $logName")
    }
  }

  /** Forgets epochs that end before `offset`, keeping the one that covers it. */
  def truncateFromStart(offset: Long): Unit = synchronized {
    val covering = epochs.lastIndexWhere(_.startOffset <= offset)
    if (covering > 0) {
      epochs.remove(0, covering)
      epochs(0) = epochs(0).copy(startOffset = offset)
    }
  }
}

object EpochEndOffsets {
  val UndefinedEpoch: Int = -1
  val UndefinedOffset: Long = -1L
}
