package dev.gantry.sched.dispatch

import com.typesafe.scalalogging.StrictLogging
import dev.gantry.sched.core.{RetryPolicy, TaskQueue, TaskStore, WorkerRegistry}
import dev.gantry.sched.model.{AttemptId, TaskId, TaskRecord, TaskState, WorkerInfo}
import dev.gantry.sched.placement.{Placer, SlotLedger}

import java.time.Instant
import scala.concurrent.ExecutionContext
import scala.util.{Failure, Success}

/**
 * Takes pending tasks off the queue, finds them a worker, reserves the slots and asks the
 * worker to launch the attempt. Failed launches are retried with backoff until the task's
 * attempt budget is spent.
 */
class Dispatcher(
    store: TaskStore,
    queue: TaskQueue,
    ledger: SlotLedger,
    placer: Placer,
    workers: WorkerRegistry,
    client: WorkerClient,
    retry: RetryPolicy,
    batchSize: Int)(implicit ec: ExecutionContext)
    extends StrictLogging {

  /** Dispatches what is ready now; returns the number of attempts sent. */
  def dispatchOnce(now: Instant): Int = {
    val live = workers.live(now)
    var sent = 0
    queue.drainReady(now, batchSize).foreach { id =>
      store.get(id) match {
        case Some(rec) if rec.state == TaskState.Pending =>
          if (tryDispatch(rec, live)) sent += 1
        case Some(rec) =>
          logger.debug(s"Skipping queued task $id in state ${rec.state}")
        case None =>
          logger.debug(s"Skipping queued task $id: no longer known")
      }
    }
    sent
  }

  private def tryDispatch(rec: TaskRecord, live: Seq[WorkerInfo]): Boolean = {
    val attempt = rec.nextAttempt
    placer.choose(live, rec.spec.slots, avoid = rec.worker.toSet) match {
      case None =>
        queue.park(rec.id)
        false
      case Some(worker) if !ledger.tryReserve(worker.id, attempt, rec.spec.slots) =>
        queue.park(rec.id)
        false
      case Some(worker) =>
        store.update(rec.id)(_.copy(
          state = TaskState.Dispatching,
          attempts = attempt.attempt,
          currentAttempt = Some(attempt),
          worker = Some(worker.id)))
        logger.info(s"Dispatching $attempt (${rec.spec.slots} slots) to ${worker.id}, " +
          s"${ledger.free(worker.id)} slots left there")
        launch(rec, attempt, worker)
        true
    }
  }

  private def launch(rec: TaskRecord, attempt: AttemptId, worker: WorkerInfo): Unit =
    client.launch(worker, attempt, rec.spec).onComplete {
      case Success(LaunchResult.Accepted) =>
        store.update(rec.id)(r => if (r.currentAttempt.contains(attempt)) r.copy(state = TaskState.Running) else r)
        logger.debug(s"Worker ${worker.id} accepted $attempt")
      case Success(LaunchResult.Rejected(reason)) =>
        logger.info(s"Worker ${worker.id} rejected $attempt: $reason")
        ledger.release(attempt)
        retryOrFail(rec.id, attempt, reason)
      case Failure(e) =>
        logger.warn(s"Launch of $attempt on ${worker.id} failed", e)
        retryOrFail(rec.id, attempt, e.toString)
    }

  private def retryOrFail(id: TaskId, attempt: AttemptId, reason: String): Unit =
    store.get(id).filter(_.currentAttempt.contains(attempt)).foreach { rec =>
      if (attempt.attempt >= rec.spec.maxAttempts) {
        store.update(id)(_.copy(state = TaskState.Failed, lastError = Some(reason)))
        logger.error(s"Task $id failed permanently after ${attempt.attempt} attempts: $reason")
      } else {
        val delay = retry.delayFor(attempt.attempt)
        store.update(id)(_.copy(state = TaskState.Pending, lastError = Some(reason)))
        queue.offer(id, Instant.now().plusMillis(delay.toMillis))
        logger.info(s"Retrying task $id in ${delay.toMillis} ms " +
          s"(attempt ${attempt.attempt} of ${rec.spec.maxAttempts} failed)")
      }
    }
}
