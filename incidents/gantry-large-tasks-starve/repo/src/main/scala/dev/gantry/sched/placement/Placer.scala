package dev.gantry.sched.placement

import dev.gantry.sched.model.{WorkerId, WorkerInfo}

/** Chooses a worker for an attempt: the live, non-draining worker with the most free slots. */
class Placer(ledger: SlotLedger) {

  def choose(candidates: Iterable[WorkerInfo], slots: Int, avoid: Set[WorkerId]): Option[WorkerInfo] = {
    val eligible = candidates.filter(w => !w.draining && ledger.free(w.id) >= slots)
    val preferred = eligible.filterNot(w => avoid.contains(w.id))
    val pool = if (preferred.nonEmpty) preferred else eligible
    if (pool.isEmpty) None
    else Some(pool.maxBy(w => (ledger.free(w.id), w.id.value)))
  }

  def describeFree(candidates: Iterable[WorkerInfo]): String =
    candidates.toSeq
      .sortBy(_.id.value)
      .map(w => s"${w.id}=${ledger.free(w.id)}")
      .mkString(", ")
}
