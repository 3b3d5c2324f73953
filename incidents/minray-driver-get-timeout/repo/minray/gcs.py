"""Global control store: cluster membership, task table and job table.

In a real deployment this is a separate service; here it is reached through
the in-process :class:`minray.transport.Network`.
"""

import logging
import threading
import time

from minray.transport import Endpoint

log = logging.getLogger("minray.gcs")

GCS_ENDPOINT = "gcs"


class GcsServer:
    def __init__(self, network, node_timeout_s):
        self._lock = threading.Lock()
        self._nodes = {}
        self._tasks = {}
        self._jobs = {}
        self._node_timeout = node_timeout_s
        self.endpoint = Endpoint(GCS_ENDPOINT)
        self.endpoint.register("RegisterNode", self._register_node)
        self.endpoint.register("Heartbeat", self._heartbeat)
        self.endpoint.register("UpdateTask", self._update_task)
        self.endpoint.register("GetTask", self._get_task)
        self.endpoint.register("RegisterJob", self._register_job)
        network.attach(self.endpoint)

    def _register_node(self, req):
        with self._lock:
            self._nodes[req["node_id"]] = {"address": req["address"], "last_seen": time.monotonic(),
                                           "alive": True}
        log.info("node %s registered at %s", req["node_id"], req["address"])
        return {"ok": True}

    def _heartbeat(self, req):
        with self._lock:
            node = self._nodes.get(req["node_id"])
            if node is None:
                return {"ok": False, "reason": "unknown node"}
            node["last_seen"] = time.monotonic()
            node["load"] = req.get("load", {})
        return {"ok": True}

    def _update_task(self, req):
        with self._lock:
            self._tasks[req["task_id"]] = (req["state"], time.monotonic())
        return {"ok": True}

    def _get_task(self, req):
        with self._lock:
            state = self._tasks.get(req["task_id"])
        return {"state": state[0] if state else None}

    def _register_job(self, req):
        with self._lock:
            job = len(self._jobs) + 1
            self._jobs[job] = {"driver": req["driver"], "started": time.time()}
        log.info("job %02x registered for driver %s", job, req["driver"])
        return {"job": job}

    def check_liveness(self):
        now = time.monotonic()
        dead = []
        with self._lock:
            for node_id, node in self._nodes.items():
                if node["alive"] and now - node["last_seen"] > self._node_timeout:
                    node["alive"] = False
                    dead.append(node_id)
        for node_id in dead:
            log.warning("node %s missed heartbeats for %.1fs; marking dead", node_id,
                        self._node_timeout)
        return dead


class GcsClient:
    def __init__(self, network):
        self._network = network

    def register_node(self, node_id, address):
        return self._network.call_sync(GCS_ENDPOINT, "RegisterNode",
                                       {"node_id": str(node_id), "address": address}, timeout=5)

    def heartbeat(self, node_id, load):
        return self._network.call(GCS_ENDPOINT, "Heartbeat", {"node_id": str(node_id), "load": load})

    def record_task_state(self, task_id, state):
        # Fire and forget: the task table is advisory.
        self._network.call(GCS_ENDPOINT, "UpdateTask", {"task_id": str(task_id), "state": state})

    def task_state(self, task_id, timeout=5):
        return self._network.call_sync(GCS_ENDPOINT, "GetTask", {"task_id": str(task_id)},
                                       timeout=timeout)["state"]

    def register_job(self, driver):
        return self._network.call_sync(GCS_ENDPOINT, "RegisterJob", {"driver": driver}, timeout=5)["job"]
