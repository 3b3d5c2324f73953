package io.tidelog.log

/** One record of the replicated log. `epoch` is the leader epoch in which it was first appended. */
final case class LogEntry(offset: Long, epoch: Int, payload: Array[Byte]) {
  def sizeInBytes: Int = payload.length + LogEntry.HeaderSize

  override def toString: String = s"LogEntry(offset=$offset, epoch=$epoch, ${payload.length} bytes)"
}

object LogEntry {
  val HeaderSize: Int = 8 + 4 + 4
}

class OffsetOutOfRangeException(msg: String) extends RuntimeException(msg)
