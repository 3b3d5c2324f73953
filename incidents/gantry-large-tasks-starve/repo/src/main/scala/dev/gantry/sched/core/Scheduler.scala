package dev.gantry.sched.core

import com.typesafe.scalalogging.StrictLogging
import dev.gantry.sched.dispatch.{Dispatcher, WorkerClient}
import dev.gantry.sched.model._
import dev.gantry.sched.placement.{Placer, SlotLedger}

import java.time.Instant
import java.util.UUID
import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}
import scala.concurrent.ExecutionContext
import scala.concurrent.duration._
import scala.util.control.NonFatal

final case class SchedulerConfig(
    dispatchIntervalMs: Long = 200L,
    heartbeatTimeoutMs: Long = 30000L,
    launchTimeout: FiniteDuration = 10.seconds,
    starvationWarnAfter: FiniteDuration = 10.minutes,
    dispatchBatch: Int = 64)

/** Entry point of the scheduler: accepts tasks, tracks workers and drives dispatching. */
class Scheduler(config: SchedulerConfig)(implicit ec: ExecutionContext) extends StrictLogging {
  private val store = new TaskStore
  private val queue = new TaskQueue
  private val ledger = new SlotLedger
  private val placer = new Placer(ledger)
  private val workers = new WorkerRegistry(ledger, config.heartbeatTimeoutMs)
  private val client = new WorkerClient(config.launchTimeout)
  private val dispatcher =
    new Dispatcher(store, queue, ledger, placer, workers, client, RetryPolicy(), config.dispatchBatch)
  private val loop: ScheduledExecutorService = Executors.newScheduledThreadPool(2, (r: Runnable) => {
    val t = new Thread(r, s"gantry-loop-${UUID.randomUUID().toString.take(4)}")
    t.setDaemon(true)
    t
  })
  private var lastStarvationWarn = Map.empty[TaskId, Long]

  def start(): Unit = {
    loop.scheduleWithFixedDelay(() => guarded("dispatch")(tick()), 0, config.dispatchIntervalMs, TimeUnit.MILLISECONDS)
    loop.scheduleWithFixedDelay(() => guarded("housekeeping")(housekeeping()), 10, 60, TimeUnit.SECONDS)
    logger.info(s"Scheduler started (launch timeout ${config.launchTimeout.toMillis} ms, " +
      s"heartbeat timeout ${config.heartbeatTimeoutMs} ms)")
  }

  private def guarded(what: String)(body: => Unit): Unit =
    try body
    catch { case NonFatal(e) => logger.error(s"Unexpected error in $what loop", e) }

  def submit(spec: TaskSpec): TaskId = {
    val now = Instant.now()
    val id = TaskId(s"t-${UUID.randomUUID().toString.take(8)}")
    store.put(TaskRecord(id, spec, TaskState.Pending, 0, None, None, now, now, None))
    queue.offer(id, now)
    logger.info(s"Accepted task $id (${spec.image}, ${spec.slots} slots)")
    id
  }

  def registerWorker(id: String, endpoint: String, slots: Int): Unit = {
    workers.register(WorkerId(id), endpoint, slots, Instant.now())
    queue.unparkAll(Instant.now())
  }

  def workerHeartbeat(id: String, usedSlots: Int): Boolean = workers.heartbeat(WorkerId(id), usedSlots, Instant.now())

  /** Status report from a worker about one of its attempts. */
  def onAttemptStatus(status: AttemptStatus): Unit = {
    if (TaskState.terminal.contains(status.state) && ledger.release(status.attempt)) {
      queue.unparkAll(Instant.now())
    }
    store.get(status.attempt.task) match {
      case Some(rec) if rec.currentAttempt.contains(status.attempt) =>
        status.state match {
          case TaskState.Succeeded =>
            store.update(rec.id)(_.copy(state = TaskState.Succeeded))
            logger.info(s"Attempt ${status.attempt} succeeded on ${status.worker}")
          case TaskState.Failed =>
            logger.info(s"Attempt ${status.attempt} failed on ${status.worker}: ${status.message.getOrElse("no message")}")
            store.update(rec.id)(_.copy(state = TaskState.Pending, lastError = status.message))
            queue.offer(rec.id, Instant.now())
          case TaskState.Running =>
            store.update(rec.id)(_.copy(state = TaskState.Running))
          case other =>
            logger.debug(s"Ignoring state $other for ${status.attempt}")
        }
      case Some(rec) =>
        logger.info(s"Ignoring status ${status.state} for stale attempt ${status.attempt} " +
          s"(current ${rec.currentAttempt.getOrElse("none")})")
      case None =>
        logger.debug(s"Status for unknown task ${status.attempt.task}")
    }
  }

  private def tick(): Unit = {
    val now = Instant.now()
    dispatcher.dispatchOnce(now)
  }

  private def housekeeping(): Unit = {
    val now = Instant.now()
    workers.expire(now).foreach { w =>
      val lost = ledger.removeWorker(w.id)
      lost.foreach { attempt =>
        store.update(attempt.task)(r =>
          if (r.currentAttempt.contains(attempt)) r.copy(state = TaskState.Pending, lastError = Some(s"worker ${w.id} lost"))
          else r)
        queue.offer(attempt.task, now)
      }
    }
    queue.unparkAll(now)
    val counts = store.countByState
    logger.info(s"stats: pending=${counts.getOrElse(TaskState.Pending, 0)} " +
      s"running=${counts.getOrElse(TaskState.Running, 0)} workers=${workers.live(now).size} " +
      s"slots reserved=${ledger.totalReserved}/${ledger.totalCapacity}")
    warnStarving(now)
    store.evictTerminalOlderThan(now.toEpochMilli - 6.hours.toMillis)
  }

  private def warnStarving(now: Instant): Unit = {
    val threshold = config.starvationWarnAfter.toMillis
    store.inState(TaskState.Pending).foreach { rec =>
      val waited = now.toEpochMilli - rec.pendingSince.toEpochMilli
      val lastWarn = lastStarvationWarn.getOrElse(rec.id, 0L)
      if (waited > threshold && now.toEpochMilli - lastWarn > threshold) {
        lastStarvationWarn += rec.id -> now.toEpochMilli
        logger.warn(s"Task ${rec.id} has been pending for ${waited / 1000} s: no worker has ${rec.spec.slots} " +
          s"free slots (free: ${placer.describeFree(workers.live(now))})")
      }
    }
  }

  def shutdown(): Unit = {
    loop.shutdownNow()
    logger.info("Scheduler stopped")
  }
}

object Scheduler {
  def main(args: Array[String]): Unit = {
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(Executors.newFixedThreadPool(4))
    val scheduler = new Scheduler(SchedulerConfig())
    scheduler.start()
    sys.addShutdownHook(scheduler.shutdown())
    Thread.currentThread().join()
  }
}
