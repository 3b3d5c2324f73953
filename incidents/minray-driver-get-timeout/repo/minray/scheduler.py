"""The local scheduler ("raylet").

The raylet accepts task submissions, resolves their object arguments against
the local object store and hands runnable tasks to idle workers. Tasks whose
arguments are not yet available are parked until the store reports them.
"""

import logging
import queue
import threading
import time
from dataclasses import dataclass, field

from minray.ids import ObjectID, ObjectRef

log = logging.getLogger("minray.raylet")


@dataclass
class TaskSpec:
    task_id: object
    function_name: str
    args: tuple
    kwargs: dict
    owner: object
    retries_left: int = 3
    submitted_at: float = field(default_factory=time.monotonic)

    def dependencies(self):
        deps = [a.object_id for a in self.args if isinstance(a, ObjectRef)]
        deps.extend(v.object_id for v in self.kwargs.values() if isinstance(v, ObjectRef))
        return deps

    def return_id(self):
        return ObjectID.for_return(self.task_id)


@dataclass
class _PendingTask:
    spec: TaskSpec
    missing: set
    parked_at: float = field(default_factory=time.monotonic)


class Raylet:
    def __init__(self, node_id, store, worker_pool, gcs_client, config):
        self._node_id = node_id
        self._store = store
        self._pool = worker_pool
        self._gcs = gcs_client
        self._config = config
        self._lock = threading.Lock()
        self._waiting = {}
        self._dep_index = {}
        self._ready = queue.Queue()
        self._running = {}
        self._stopped = threading.Event()
        self._dispatcher = threading.Thread(
            target=self._dispatch_loop, name="raylet-dispatch", daemon=True)
        self._num_submitted = 0
        self._num_finished = 0

    def start(self):
        self._pool.set_completion_handler(self._on_task_finished)
        self._dispatcher.start()
        log.info("raylet on node %s started with %d workers", self._node_id, self._pool.size)

    def stop(self):
        self._stopped.set()
        self._dispatcher.join(timeout=2.0)

    # -- submission ------------------------------------------------------

    def submit(self, spec):
        with self._lock:
            self._num_submitted += 1
        log.debug("received task %s (%s) from %s", spec.task_id, spec.function_name, spec.owner)
        self._gcs.record_task_state(spec.task_id, "PENDING_ARGS")
        self._enqueue(spec)
        return ObjectRef(spec.return_id(), self._node_id)

    def _enqueue(self, spec):
        missing = {oid for oid in spec.dependencies() if not self._store.contains(oid)}
        if not missing:
            self._make_ready(spec)
            return
        with self._lock:
            self._waiting[spec.task_id] = _PendingTask(spec, set(missing))
            for oid in missing:
                self._dep_index.setdefault(oid, set()).add(spec.task_id)
        for oid in missing:
            self._store.subscribe(oid, self._on_object_available)
        log.info("task %s parked waiting for %d argument(s): %s",
                 spec.task_id, len(missing), ", ".join(str(o) for o in sorted(missing)))

    def _on_object_available(self, object_id):
        unblocked = []
        with self._lock:
            for task_id in self._dep_index.pop(object_id, ()):
                pending = self._waiting.get(task_id)
                if pending is None:
                    continue
                pending.missing.discard(object_id)
                if not pending.missing:
                    del self._waiting[task_id]
                    unblocked.append(pending)
        for pending in unblocked:
            waited = time.monotonic() - pending.parked_at
            log.info("task %s arguments ready after %.1f ms", pending.spec.task_id, waited * 1000)
            self._make_ready(pending.spec)

    def _make_ready(self, spec):
        self._gcs.record_task_state(spec.task_id, "READY")
        self._ready.put(spec)

    # -- dispatch --------------------------------------------------------

    def _dispatch_loop(self):
        while not self._stopped.is_set():
            try:
                spec = self._ready.get(timeout=0.5)
            except queue.Empty:
                continue
            worker = self._pool.acquire(timeout=None)
            for oid in spec.dependencies():
                self._store.pin(oid)
            with self._lock:
                self._running[spec.task_id] = (spec, worker.worker_id, time.monotonic())
            self._gcs.record_task_state(spec.task_id, "RUNNING")
            log.debug("dispatching task %s to worker %s", spec.task_id, worker.worker_id)
            worker.assign(spec, self._resolve_args(spec))

    def _resolve_args(self, spec):
        args = [self._store.get(a.object_id) if isinstance(a, ObjectRef) else a
                for a in spec.args]
        kwargs = {k: self._store.get(v.object_id) if isinstance(v, ObjectRef) else v
                  for k, v in spec.kwargs.items()}
        return args, kwargs

    def _on_task_finished(self, spec, worker_id, ok, result):
        with self._lock:
            entry = self._running.pop(spec.task_id, None)
            self._num_finished += 1
        for oid in spec.dependencies():
            self._store.unpin(oid)
        elapsed = time.monotonic() - entry[2] if entry else 0.0
        if ok:
            self._store.put(spec.return_id(), result, owner=worker_id)
            self._gcs.record_task_state(spec.task_id, "FINISHED")
            log.debug("task %s finished on %s in %.1f ms", spec.task_id, worker_id, elapsed * 1000)
            return
        if spec.retries_left > 0:
            spec.retries_left -= 1
            log.warning("task %s failed on %s (%s); retrying, %d retries left",
                        spec.task_id, worker_id, result, spec.retries_left)
            self._enqueue(spec)
            return
        log.error("task %s failed permanently on %s: %s", spec.task_id, worker_id, result)
        self._store.put(spec.return_id(), TaskError(str(spec.task_id), str(result)), owner=worker_id)
        self._gcs.record_task_state(spec.task_id, "FAILED")

    # -- introspection ---------------------------------------------------

    def debug_state(self):
        with self._lock:
            return {
                "submitted": self._num_submitted,
                "finished": self._num_finished,
                "waiting": len(self._waiting),
                "ready": self._ready.qsize(),
                "running": len(self._running),
            }

    def waiting_tasks(self):
        with self._lock:
            return {str(t): sorted(str(o) for o in p.missing) for t, p in self._waiting.items()}


class TaskError(Exception):
    def __init__(self, task_id, message):
        super().__init__(task_id, message)
        self.task_id = task_id
        self.message = message

    def __str__(self):
        return "task %s failed: %s" % (self.task_id, self.message)
