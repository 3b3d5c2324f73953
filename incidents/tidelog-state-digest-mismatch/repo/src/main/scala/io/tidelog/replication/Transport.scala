package io.tidelog.replication

import scala.collection.concurrent.TrieMap
import scala.concurrent.{ExecutionContext, Future}

/** Server side of the replication protocol, implemented by every replica. */
trait ReplicationHandler {
  def handleFetch(req: FetchRequest): FetchResponse

  def handleEpochEndOffset(req: EpochEndOffsetRequest): EpochEndOffsetResponse
}

/** Client side used by a follower to talk to its leader. */
trait PeerClient {
  def peerId: Int

  def fetch(req: FetchRequest): Future[FetchResponse]

  def epochEndOffset(req: EpochEndOffsetRequest): Future[EpochEndOffsetResponse]
}

class PeerUnreachableException(val from: Int, val to: Int)
    extends RuntimeException(s"node-$to is unreachable from node-$from")

/**
 * In-memory network between replicas of one process. Links can be cut to simulate
 * partitions and crashed nodes.
 */
class InMemoryTransport(implicit ec: ExecutionContext) {
  private val handlers = TrieMap.empty[Int, ReplicationHandler]
  private val cut = TrieMap.empty[(Int, Int), Unit]

  def register(nodeId: Int, handler: ReplicationHandler): Unit = handlers.update(nodeId, handler)

  def unregister(nodeId: Int): Unit = handlers.remove(nodeId)

  def partition(a: Int, b: Int): Unit = {
    cut.update((a, b), ())
    cut.update((b, a), ())
  }

  def heal(a: Int, b: Int): Unit = {
    cut.remove((a, b))
    cut.remove((b, a))
  }

  def client(from: Int, to: Int): PeerClient = new PeerClient {
    override val peerId: Int = to

    private def call[T](f: ReplicationHandler => T): Future[T] =
      if (cut.contains((from, to))) Future.failed(new PeerUnreachableException(from, to))
      else
        handlers.get(to) match {
          case Some(h) => Future(f(h))
          case scala.None => Future.failed(new PeerUnreachableException(from, to))
        }

    override def fetch(req: FetchRequest): Future[FetchResponse] = call(_.handleFetch(req))

    override def epochEndOffset(req: EpochEndOffsetRequest): Future[EpochEndOffsetResponse] =
      call(_.handleEpochEndOffset(req))
  }
}
