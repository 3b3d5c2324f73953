package dev.gantry.sched.placement

import com.typesafe.scalalogging.StrictLogging
import dev.gantry.sched.model.{AttemptId, WorkerId}

import scala.collection.mutable

/**
 * Tracks which attempt holds how many slots on which worker. A reservation is made before
 * an attempt is sent to a worker and must be released when the attempt ends, whatever the
 * outcome.
 */
class SlotLedger extends StrictLogging {
  private final case class Reservation(worker: WorkerId, slots: Int)

  private val capacity = mutable.HashMap.empty[WorkerId, Int]
  private val reservations = mutable.HashMap.empty[AttemptId, Reservation]

  def setCapacity(worker: WorkerId, slots: Int): Unit = synchronized {
    capacity.update(worker, slots)
  }

  def removeWorker(worker: WorkerId): Seq[AttemptId] = synchronized {
    capacity.remove(worker)
    val held = reservations.collect { case (a, r) if r.worker == worker => a }.toList
    held.foreach(reservations.remove)
    if (held.nonEmpty) logger.info(s"Dropped ${held.size} reservations held on removed worker $worker")
    held
  }

  def reserved(worker: WorkerId): Int = synchronized {
    reservations.valuesIterator.filter(_.worker == worker).map(_.slots).sum
  }

  def free(worker: WorkerId): Int = synchronized {
    capacity.getOrElse(worker, 0) - reserved(worker)
  }

  def freeByWorker: Map[WorkerId, Int] = synchronized {
    capacity.keys.map(w => w -> free(w)).toMap
  }

  def totalCapacity: Int = synchronized(capacity.values.sum)

  def totalReserved: Int = synchronized(reservations.values.map(_.slots).sum)

  def holder(attempt: AttemptId): Option[WorkerId] = synchronized(reservations.get(attempt).map(_.worker))

  /** Reserves `slots` on `worker` for `attempt`; false if the worker does not have them free. */
  def tryReserve(worker: WorkerId, attempt: AttemptId, slots: Int): Boolean = synchronized {
    if (reservations.contains(attempt)) {
      logger.warn(s"Attempt $attempt already holds a reservation on ${reservations(attempt).worker}")
      false
    } else if (free(worker) < slots) {
      false
    } else {
      reservations.update(attempt, Reservation(worker, slots))
      true
    }
  }

  def release(attempt: AttemptId): Boolean = synchronized {
    reservations.remove(attempt) match {
      case Some(r) =>
        logger.debug(s"Released ${r.slots} slots of $attempt on ${r.worker}")
        true
      case None =>
        false
    }
  }
}
