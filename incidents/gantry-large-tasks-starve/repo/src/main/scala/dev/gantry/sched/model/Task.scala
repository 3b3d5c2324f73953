package dev.gantry.sched.model

import java.time.Instant

final case class TaskId(value: String) extends AnyVal {
  override def toString: String = value
}

/** What a task needs and what to run. */
final case class TaskSpec(image: String, args: Seq[String], slots: Int, maxAttempts: Int = 5)

/** One try at running a task; every retry gets a fresh attempt number. */
final case class AttemptId(task: TaskId, attempt: Int) {
  override def toString: String = s"$task#$attempt"
}

sealed trait TaskState

object TaskState {
  case object Pending extends TaskState
  case object Dispatching extends TaskState
  case object Running extends TaskState
  case object Succeeded extends TaskState
  case object Failed extends TaskState
  case object Cancelled extends TaskState

  val terminal: Set[TaskState] = Set(Succeeded, Failed, Cancelled)
}

final case class TaskRecord(
    id: TaskId,
    spec: TaskSpec,
    state: TaskState,
    attempts: Int,
    currentAttempt: Option[AttemptId],
    worker: Option[WorkerId],
    submittedAt: Instant,
    pendingSince: Instant,
    lastError: Option[String]) {

  def isTerminal: Boolean = TaskState.terminal.contains(state)

  def nextAttempt: AttemptId = AttemptId(id, attempts + 1)
}
