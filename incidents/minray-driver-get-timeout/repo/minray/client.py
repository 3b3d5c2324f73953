"""Driver-side API: submit tasks, put values and fetch results."""

import logging
import pickle
import threading
import time

from minray.ids import ObjectID, ObjectRef, TaskID
from minray.node import raylet_endpoint_name
from minray.scheduler import TaskError

log = logging.getLogger("minray.client")


class GetTimeoutError(TimeoutError):
    pass


class Client:
    def __init__(self, network, gcs_client, node_id, config, driver_name="driver"):
        self._network = network
        self._gcs = gcs_client
        self._node_id = node_id
        self._config = config
        self._target = raylet_endpoint_name(node_id)
        self._driver = driver_name
        self._job = gcs_client.register_job(driver_name)
        self._lock = threading.Lock()
        self._put_seq = 0
        log.info("driver %s connected to node %s as job %02x", driver_name, node_id, self._job)

    @property
    def job(self):
        return self._job

    def submit(self, function_name, *args, **kwargs):
        task_id = TaskID.for_job(self._job)
        reply = self._network.call_sync(self._target, "SubmitTask", {
            "task_id": task_id,
            "function": function_name,
            "args": list(args),
            "kwargs": kwargs,
            "owner": self._driver,
        }, timeout=10)
        ref = reply["ref"]
        log.debug("submitted %s as %s -> %s", function_name, task_id, ref.object_id)
        return ref

    def put(self, value):
        with self._lock:
            self._put_seq += 1
            task_id = TaskID(self._job, 0xF00000 + self._put_seq)
        object_id = ObjectID.for_return(task_id)
        self._network.call_sync(self._target, "PutObject", {
            "object_id": object_id, "value": value, "owner": self._driver}, timeout=10)
        return ObjectRef(object_id, self._node_id)

    def get(self, ref, timeout=None):
        """Block until ``ref`` is available and return its value."""
        if isinstance(ref, (list, tuple)):
            return [self.get(r, timeout=timeout) for r in ref]
        timeout = self._config.get_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        step = self._config.get_progress_interval_s
        started = time.monotonic()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                state = self._gcs.task_state(ref.object_id.task)
                log.error("get(%s) timed out after %.1fs; task %s state=%s",
                          ref.object_id, timeout, ref.object_id.task, state)
                raise GetTimeoutError("timed out after %.1fs waiting for %s" % (timeout, ref))
            wait_for = min(step, remaining)
            reply = self._network.call_sync(self._target, "WaitObject", {
                "object_id": ref.object_id, "timeout": wait_for}, timeout=wait_for + 5)
            if reply["ready"]:
                break
            log.warning("still waiting for %s after %.1fs", ref.object_id, time.monotonic() - started)
        data = self._network.call_sync(self._target, "GetObject",
                                       {"object_id": ref.object_id}, timeout=10)["data"]
        value = pickle.loads(data)
        if isinstance(value, TaskError):
            raise value
        return value

    def wait(self, refs, num_returns=1, timeout=None):
        ready, pending = [], list(refs)
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending and len(ready) < num_returns:
            for ref in list(pending):
                reply = self._network.call_sync(self._target, "WaitObject", {
                    "object_id": ref.object_id, "timeout": 0.05}, timeout=5)
                if reply["ready"]:
                    pending.remove(ref)
                    ready.append(ref)
            if deadline is not None and time.monotonic() > deadline:
                break
        return ready, pending

    def debug_state(self):
        return self._network.call_sync(self._target, "DebugState", {}, timeout=5)
