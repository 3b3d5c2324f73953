package io.tidelog.state

import java.nio.charset.StandardCharsets

/** Commands carried in log entries and applied by the key-value state machine. */
sealed trait Command

object Command {
  final case class Put(key: String, value: String) extends Command
  final case class Delete(key: String) extends Command
  final case class Incr(key: String, delta: Long) extends Command
  case object Noop extends Command

  def encode(cmd: Command): Array[Byte] = {
    val text = cmd match {
      case Put(k, v)    => s"P\u0000$k\u0000$v"
      case Delete(k)    => s"D\u0000$k"
      case Incr(k, d)   => s"I\u0000$k\u0000$d"
      case Noop         => "N"
    }
    text.getBytes(StandardCharsets.UTF_8)
  }

  def decode(bytes: Array[Byte]): Command = {
    val parts = new String(bytes, StandardCharsets.UTF_8).split("\u0000", -1)
    parts(0) match {
      case "P" if parts.length == 3 => Put(parts(1), parts(2))
      case "D" if parts.length == 2 => Delete(parts(1))
      case "I" if parts.length == 3 => Incr(parts(1), parts(2).toLong)
      case "N"                      => Noop
      case other                    => throw new IllegalArgumentException(s"Cannot decode command tag '$other'")
    }
  }
}
