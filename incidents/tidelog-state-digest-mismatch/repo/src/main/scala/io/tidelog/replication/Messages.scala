package io.tidelog.replication

import io.tidelog.log.LogEntry

sealed trait ReplicationError

object ReplicationError {
  case object None extends ReplicationError
  case object NotLeader extends ReplicationError
  case object FencedLeaderEpoch extends ReplicationError
  case object UnknownLeaderEpoch extends ReplicationError
  case object OffsetOutOfRange extends ReplicationError
}

final case class DigestCheckpoint(offset: Long, digest: String)

final case class FetchRequest(replicaId: Int, leaderEpoch: Int, fetchOffset: Long, maxEntries: Int)

final case class FetchResponse(
    error: ReplicationError,
    leaderEpoch: Int,
    entries: Seq[LogEntry],
    highWatermark: Long,
    checkpoint: Option[DigestCheckpoint])

final case class EpochEndOffsetRequest(replicaId: Int, leaderEpoch: Int, requestedEpoch: Int)

final case class EpochEndOffsetResponse(error: ReplicationError, epoch: Int, endOffset: Long)

object FetchResponse {
  def error(err: ReplicationError, epoch: Int): FetchResponse = FetchResponse(err, epoch, Nil, -1L, None)
}
