package dev.gantry.sched.dispatch

import com.typesafe.scalalogging.StrictLogging
import dev.gantry.sched.model.{AttemptId, TaskSpec, WorkerInfo}

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.time.Duration
import scala.concurrent.duration.FiniteDuration
import scala.concurrent.{ExecutionContext, Future}
import scala.jdk.FutureConverters._

sealed trait LaunchResult

object LaunchResult {
  case object Accepted extends LaunchResult
  final case class Rejected(reason: String) extends LaunchResult
}

class WorkerProtocolException(msg: String) extends RuntimeException(msg)

/** HTTP client for the worker agent API. */
class WorkerClient(requestTimeout: FiniteDuration)(implicit ec: ExecutionContext) extends StrictLogging {
  private val http: HttpClient = HttpClient
    .newBuilder()
    .version(HttpClient.Version.HTTP_1_1)
    .connectTimeout(Duration.ofSeconds(2))
    .build()

  private def encode(attempt: AttemptId, spec: TaskSpec): String = {
    val args = spec.args.map(a => "\"" + a.replace("\"", "\\\"") + "\"").mkString("[", ",", "]")
    s"""{"task":"${attempt.task}","attempt":${attempt.attempt},"image":"${spec.image}","slots":${spec.slots},"args":$args}"""
  }

  def launch(worker: WorkerInfo, attempt: AttemptId, spec: TaskSpec): Future[LaunchResult] = {
    val request = HttpRequest
      .newBuilder(URI.create(s"${worker.endpoint}/v1/attempts"))
      .timeout(Duration.ofMillis(requestTimeout.toMillis))
      .header("Content-Type", "application/json")
      .POST(HttpRequest.BodyPublishers.ofString(encode(attempt, spec)))
      .build()
    http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).asScala.map { resp =>
      resp.statusCode() match {
        case 200 | 201 => LaunchResult.Accepted
        case 409       => LaunchResult.Rejected("attempt already known to worker")
        case 429       => LaunchResult.Rejected("worker has no free slots")
        case 503       => LaunchResult.Rejected("worker is draining")
        case code =>
          throw new WorkerProtocolException(s"Unexpected status $code from ${worker.id}: ${resp.body().take(200)}")
      }
    }
  }

  def kill(worker: WorkerInfo, attempt: AttemptId): Future[Boolean] = {
    val request = HttpRequest
      .newBuilder(URI.create(s"${worker.endpoint}/v1/attempts/${attempt.task}/${attempt.attempt}"))
      .timeout(Duration.ofMillis(requestTimeout.toMillis))
      .DELETE()
      .build()
    http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).asScala.map(_.statusCode() / 100 == 2)
  }
}
