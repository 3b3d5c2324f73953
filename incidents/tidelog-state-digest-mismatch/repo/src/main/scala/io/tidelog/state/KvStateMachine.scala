package io.tidelog.state

import com.typesafe.scalalogging.StrictLogging
import io.tidelog.log.LogEntry

import java.security.MessageDigest
import scala.collection.mutable

/**
 * Applies committed log entries to an in-memory key-value map. Every `digestInterval`
 * applied offsets it records a digest of the whole state so that replicas can compare.
 */
class KvStateMachine(nodeId: Int, digestInterval: Long) extends StrictLogging {
  private val data = mutable.HashMap.empty[String, String]
  private val checkpoints = mutable.LinkedHashMap.empty[Long, String]
  @volatile private var applied: Long = 0L

  /** The offset of the next entry to apply. */
  def appliedOffset: Long = applied

  def get(key: String): Option[String] = synchronized(data.get(key))

  def apply(entry: LogEntry): Unit = synchronized {
    if (entry.offset != applied) {
      throw new IllegalStateException(s"node-$nodeId: expected to apply offset $applied but got ${entry.offset}")
    }
    Command.decode(entry.payload) match {
      case Command.Put(k, v) => data.update(k, v)
      case Command.Delete(k) => data.remove(k)
      case Command.Incr(k, d) =>
        val current = data.get(k).map(_.toLong).getOrElse(0L)
        data.update(k, (current + d).toString)
      case Command.Noop => ()
    }
    applied = entry.offset + 1
    if (applied % digestInterval == 0) {
      val d = digest()
      checkpoints.update(applied, d)
      if (checkpoints.size > 16) checkpoints.remove(checkpoints.head._1)
      logger.info(s"State checkpoint at offset $applied: ${data.size} keys, digest $d")
    }
  }

  def checkpointAt(offset: Long): Option[String] = synchronized(checkpoints.get(offset))

  def latestCheckpoint: Option[(Long, String)] = synchronized(checkpoints.lastOption)

  def digest(): String = synchronized {
    val md = MessageDigest.getInstance("SHA-256")
    data.toSeq.sortBy(_._1).foreach { case (k, v) =>
      md.update(k.getBytes("UTF-8"))
      md.update(0.toByte)
      md.update(v.getBytes("UTF-8"))
      md.update(1.toByte)
    }
    md.digest().take(8).map(b => f"${b & 0xff}%02x").mkString
  }

  def size: Int = synchronized(data.size)
}
