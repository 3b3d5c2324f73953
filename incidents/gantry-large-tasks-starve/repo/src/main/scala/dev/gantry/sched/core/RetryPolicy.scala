package dev.gantry.sched.core

import scala.concurrent.duration._
import scala.util.Random

/** Exponential backoff with jitter, capped at `max`. */
final case class RetryPolicy(base: FiniteDuration = 2.seconds, max: FiniteDuration = 2.minutes, jitter: Double = 0.2) {
  def delayFor(failedAttempt: Int): FiniteDuration = {
    val exp = base * math.pow(2, math.max(0, failedAttempt - 1)).toLong
    val capped = if (exp > max) max else exp
    val spread = (capped.toMillis * jitter * (Random.nextDouble() * 2 - 1)).toLong
    math.max(0L, capped.toMillis + spread).millis
  }
}
