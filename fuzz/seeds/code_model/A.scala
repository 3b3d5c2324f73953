package dev.gantry.sched.api

import dev.gantry.sched.model.{AttemptId, AttemptStatus, TaskId, TaskState, WorkerId}

import scala.util.Try

/**
 * Decoding of the small flat JSON documents worker agents post to the scheduler
 * (registration, heartbeats and attempt status). Only string and integer fields occur.
 */
object AgentMessages {
  final case class Registration(worker: String, endpoint: String, slots: Int)
  final case class Heartbeat(worker: String, usedSlots: Int)

  private val Field = "\"([a-zA-Z_]+)\"\\s*:\\s*(\"((?:[^\"\\\\]|\\\\.)*)\"|-?[0-9]+)".r

  private def fields(json: String): Map[String, String] =
    Field.findAllMatchIn(json).map { m =>
      val raw = Option(m.group(3)).getOrElse(m.group(2))
      m.group(1) -> raw.replace("\\\"", "\"")
    }.toMap

  private def state(s: String): Option[TaskState] = s.toLowerCase match {
    case "running"   => Some(TaskState.Running)
    case "succeeded" => Some(TaskState.Succeeded)
    case "failed"    => Some(TaskState.Failed)
    case "cancelled" => Some(TaskState.Cancelled)
    case _           => None
  }

  def parseRegistration(json: String): Either[String, Registration] = {
    val f = fields(json)
    for {
      w <- f.get("worker").toRight("missing worker")
      e <- f.get("endpoint").toRight("missing endpoint")
      s <- f.get("slots").flatMap(v => Try(v.toInt).toOption).toRight("missing or bad slots")
    } yield Registration(w, e, s)
  }

  def parseHeartbeat(json: String): Either[String, Heartbeat] = {
    val f = fields(json)
    for {
      w <- f.get("worker").toRight("missing worker")
      u <- f.get("used_slots").flatMap(v => Try(v.toInt).toOption).toRight("missing or bad used_slots")
    } yield Heartbeat(w, u)
  }

  def parseStatus(json: String): Either[String, AttemptStatus] = {
    val f = fields(json)
    for {
      t <- f.get("task").toRight("missing task")
      a <- f.get("attempt").flatMap(v => Try(v.toInt).toOption).toRight("missing or bad attempt")
      w <- f.get("worker").toRight("missing worker")
      s <- f.get("state").flatMap(state).toRight("missing or unknown state")
    } yield AttemptStatus(AttemptId(TaskId(t), a), WorkerId(w), s, f.get("message"))
  }
}
