package dev.gantry.sched.core

import com.typesafe.scalalogging.StrictLogging
import dev.gantry.sched.model.{WorkerId, WorkerInfo}
import dev.gantry.sched.placement.SlotLedger

import java.time.Instant
import scala.collection.concurrent.TrieMap

/** Workers that registered with the scheduler, kept alive by heartbeats. */
class WorkerRegistry(ledger: SlotLedger, heartbeatTimeoutMs: Long) extends StrictLogging {
  private val workers = TrieMap.empty[WorkerId, WorkerInfo]

  def register(id: WorkerId, endpoint: String, slots: Int, now: Instant): Unit = {
    val previous = workers.put(id, WorkerInfo(id, endpoint, slots, now))
    ledger.setCapacity(id, slots)
    if (previous.isEmpty) logger.info(s"Registered worker $id at $endpoint with $slots slots")
    else logger.info(s"Worker $id re-registered at $endpoint with $slots slots")
  }

  def heartbeat(id: WorkerId, usedSlots: Int, now: Instant): Boolean =
    workers.get(id) match {
      case Some(w) =>
        workers.update(id, w.copy(lastHeartbeat = now))
        logger.trace(s"Heartbeat from $id, $usedSlots slots in use")
        true
      case None =>
        logger.warn(s"Heartbeat from unregistered worker $id, asking it to re-register")
        false
    }

  def drain(id: WorkerId): Unit = workers.get(id).foreach { w =>
    workers.update(id, w.copy(draining = true))
    logger.info(s"Worker $id is draining")
  }

  def live(now: Instant): Seq[WorkerInfo] = workers.values.filter(_.isAlive(now, heartbeatTimeoutMs)).toSeq

  def all: Seq[WorkerInfo] = workers.values.toSeq

  def get(id: WorkerId): Option[WorkerInfo] = workers.get(id)

  /** Removes workers whose heartbeats stopped; returns them so their attempts can be retried. */
  def expire(now: Instant): Seq[WorkerInfo] = {
    val dead = workers.values.filterNot(_.isAlive(now, heartbeatTimeoutMs)).toSeq
    dead.foreach { w =>
      workers.remove(w.id)
      logger.warn(s"Worker ${w.id} missed heartbeats for more than $heartbeatTimeoutMs ms, removing it")
    }
    dead
  }
}
