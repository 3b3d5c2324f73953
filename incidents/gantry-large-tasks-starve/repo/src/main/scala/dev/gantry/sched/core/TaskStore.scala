package dev.gantry.sched.core

import dev.gantry.sched.model.{TaskId, TaskRecord, TaskState}

import scala.collection.concurrent.TrieMap

/** In-memory table of all tasks the scheduler knows about. */
class TaskStore {
  private val tasks = TrieMap.empty[TaskId, TaskRecord]

  def put(rec: TaskRecord): Unit = tasks.update(rec.id, rec)

  def get(id: TaskId): Option[TaskRecord] = tasks.get(id)

  /** Applies `f` atomically to the record, if present, and returns the new value. */
  def update(id: TaskId)(f: TaskRecord => TaskRecord): Option[TaskRecord] = {
    @annotation.tailrec
    def loop(): Option[TaskRecord] = tasks.get(id) match {
      case None => None
      case Some(old) =>
        val updated = f(old)
        if (tasks.replace(id, old, updated)) Some(updated) else loop()
    }
    loop()
  }

  def inState(state: TaskState): Iterable[TaskRecord] = tasks.values.filter(_.state == state)

  def countByState: Map[TaskState, Int] = tasks.values.groupBy(_.state).map { case (s, rs) => s -> rs.size }

  def evictTerminalOlderThan(cutoffMillis: Long): Int = {
    val old = tasks.values.filter(r => r.isTerminal && r.submittedAt.toEpochMilli < cutoffMillis).map(_.id).toList
    old.foreach(tasks.remove)
    old.size
  }
}
