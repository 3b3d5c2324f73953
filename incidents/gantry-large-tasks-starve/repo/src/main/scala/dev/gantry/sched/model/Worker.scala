package dev.gantry.sched.model

import java.time.Instant

final case class WorkerId(value: String) extends AnyVal {
  override def toString: String = value
}

/** A worker as known to the scheduler, refreshed by its heartbeats. */
final case class WorkerInfo(
    id: WorkerId,
    endpoint: String,
    totalSlots: Int,
    lastHeartbeat: Instant,
    draining: Boolean = false) {

  def isAlive(now: Instant, timeoutMs: Long): Boolean =
    now.toEpochMilli - lastHeartbeat.toEpochMilli <= timeoutMs
}

/** Status report a worker sends for an attempt it runs. */
final case class AttemptStatus(attempt: AttemptId, worker: WorkerId, state: TaskState, message: Option[String])
