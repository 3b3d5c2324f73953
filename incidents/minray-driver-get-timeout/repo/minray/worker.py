"""Worker pool: executes task functions on behalf of the raylet."""

import logging
import queue
import threading
import time
import traceback

log = logging.getLogger("minray.worker")


class FunctionRegistry:
    """Maps exported function names to callables (the "function table")."""

    def __init__(self):
        self._functions = {}
        self._lock = threading.Lock()

    def export(self, name, fn):
        with self._lock:
            if name in self._functions and self._functions[name] is not fn:
                log.warning("function %s re-exported; replacing previous definition", name)
            self._functions[name] = fn

    def lookup(self, name):
        with self._lock:
            fn = self._functions.get(name)
        if fn is None:
            raise LookupError("function %s is not exported" % name)
        return fn


class Worker:
    def __init__(self, worker_id, registry, pool):
        self.worker_id = worker_id
        self._registry = registry
        self._pool = pool
        self._inbox = queue.Queue(maxsize=1)
        self._thread = threading.Thread(target=self._run, name=worker_id, daemon=True)
        self._stopped = False
        self.tasks_executed = 0

    def start(self):
        self._thread.start()

    def assign(self, spec, resolved):
        self._inbox.put((spec, resolved))

    def stop(self):
        self._stopped = True
        self._inbox.put(None)

    def _run(self):
        log.debug("worker %s started", self.worker_id)
        while not self._stopped:
            item = self._inbox.get()
            if item is None:
                break
            spec, (args, kwargs) = item
            started = time.monotonic()
            try:
                fn = self._registry.lookup(spec.function_name)
                result = fn(*args, **kwargs)
                ok = True
            except Exception as exc:
                result = "%s: %s" % (type(exc).__name__, exc)
                log.debug("task %s raised:\n%s", spec.task_id, traceback.format_exc())
                ok = False
            self.tasks_executed += 1
            log.debug("worker %s ran %s in %.2f ms", self.worker_id, spec.function_name,
                      (time.monotonic() - started) * 1000)
            self._pool.release(self, spec, ok, result)
        log.debug("worker %s exiting", self.worker_id)


class WorkerPool:
    def __init__(self, node_id, size, registry):
        self._node_id = node_id
        self.size = size
        self._registry = registry
        self._idle = queue.Queue()
        self._workers = []
        self._on_complete = None
        for i in range(size):
            w = Worker("worker-%s-%d" % (node_id, i), registry, self)
            self._workers.append(w)

    def set_completion_handler(self, handler):
        self._on_complete = handler

    def start(self):
        for w in self._workers:
            w.start()
            self._idle.put(w)
        log.info("started %d workers on node %s", self.size, self._node_id)

    def acquire(self, timeout=None):
        return self._idle.get(timeout=timeout)

    def release(self, worker, spec, ok, result):
        handler = self._on_complete
        try:
            if handler is not None:
                handler(spec, worker.worker_id, ok, result)
        finally:
            self._idle.put(worker)

    def idle_count(self):
        return self._idle.qsize()

    def stop(self):
        for w in self._workers:
            w.stop()
