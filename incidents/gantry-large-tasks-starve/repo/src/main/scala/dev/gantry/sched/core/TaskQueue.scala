package dev.gantry.sched.core

import dev.gantry.sched.model.TaskId

import java.time.Instant
import scala.collection.mutable

/**
 * Pending tasks ordered by the time they become eligible. Tasks that could not be placed are
 * parked until capacity is freed.
 */
class TaskQueue {
  private implicit val ord: Ordering[(Long, Long, TaskId)] =
    Ordering.by[(Long, Long, TaskId), (Long, Long)](e => (e._1, e._2)).reverse
  private val heap = mutable.PriorityQueue.empty[(Long, Long, TaskId)]
  private val parked = mutable.LinkedHashSet.empty[TaskId]
  private var seq = 0L

  def offer(id: TaskId, eligibleAt: Instant): Unit = synchronized {
    seq += 1
    heap.enqueue((eligibleAt.toEpochMilli, seq, id))
  }

  def park(id: TaskId): Unit = synchronized {
    parked += id
  }

  /** Moves every parked task back into the queue, e.g. after slots were released. */
  def unparkAll(now: Instant): Int = synchronized {
    val n = parked.size
    parked.foreach { id =>
      seq += 1
      heap.enqueue((now.toEpochMilli, seq, id))
    }
    parked.clear()
    n
  }

  def drainReady(now: Instant, max: Int): List[TaskId] = synchronized {
    val out = List.newBuilder[TaskId]
    var taken = 0
    while (taken < max && heap.nonEmpty && heap.head._1 <= now.toEpochMilli) {
      out += heap.dequeue()._3
      taken += 1
    }
    out.result()
  }

  def size: Int = synchronized(heap.size + parked.size)

  def parkedCount: Int = synchronized(parked.size)
}
