package io.tidelog.server

import com.typesafe.scalalogging.StrictLogging

import scala.collection.mutable

/**
 * Decides which replica leads. Leadership only moves to a replica that is in the last known
 * ISR, and every change bumps the epoch.
 */
class Controller(nodes: Map[Int, ReplicaNode]) extends StrictLogging {
  private var epoch: Int = 0
  private var leader: Option[Int] = None
  private val live = mutable.Set.empty[Int] ++ nodes.keySet
  private var lastIsr: Set[Int] = nodes.keySet

  def currentLeader: Option[Int] = synchronized(leader)

  def currentEpoch: Int = synchronized(epoch)

  def start(initialLeader: Int): Unit = synchronized {
    electLeader(Some(initialLeader), "initial election")
  }

  def onNodeFailure(nodeId: Int): Unit = synchronized {
    live -= nodeId
    leader.foreach(l => lastIsr = nodes(l).isr match {
      case s if s.nonEmpty => s
      case _ => lastIsr
    })
    logger.warn(s"node-$nodeId is no longer live; live nodes ${live.toList.sorted.mkString(",")}")
    if (leader.contains(nodeId)) {
      electLeader(None, s"leader node-$nodeId failed")
    }
  }

  def onNodeRecovered(nodeId: Int): Unit = synchronized {
    live += nodeId
    logger.info(s"node-$nodeId is live again; rejoining as follower of node-${leader.getOrElse(-1)} in epoch $epoch")
    leader.foreach(l => nodes(nodeId).becomeFollower(l, epoch))
  }

  /** Moves leadership away from `nodeId` for maintenance. */
  def preferredReplicaElection(exclude: Int): Unit = synchronized {
    lastIsr = leader.map(l => nodes(l).isr).getOrElse(lastIsr)
    electLeader(None, s"controlled shutdown of node-$exclude", exclude = Set(exclude))
  }

  private def electLeader(preferred: Option[Int], reason: String, exclude: Set[Int] = Set.empty): Unit = {
    val candidates = (lastIsr intersect live) -- exclude
    val chosen = preferred.filter(candidates.contains).orElse(candidates.toList.sorted.headOption)
    chosen match {
      case Some(newLeader) =>
        epoch += 1
        leader = Some(newLeader)
        logger.info(s"Elected node-$newLeader as leader in epoch $epoch ($reason); ISR was ${lastIsr.toList.sorted.mkString(",")}")
        nodes(newLeader).becomeLeader(epoch)
        (live - newLeader).foreach(n => nodes(n).becomeFollower(newLeader, epoch))
      case None =>
        leader = None
        logger.error(s"No eligible leader ($reason): ISR ${lastIsr.toList.sorted.mkString(",")}, live ${live.toList.sorted.mkString(",")}")
    }
  }
}
