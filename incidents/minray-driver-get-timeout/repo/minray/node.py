"""A cluster node: object store + worker pool + raylet, exposed over RPC."""

import logging
import threading

from minray.gcs import GcsClient
from minray.ids import NodeID
from minray.object_store import ObjectNotFoundError, ObjectStore
from minray.scheduler import Raylet, TaskSpec
from minray.transport import Endpoint
from minray.worker import WorkerPool

log = logging.getLogger("minray.node")


def raylet_endpoint_name(node_id):
    return "raylet/%s" % node_id


class Node:
    def __init__(self, network, registry, config, node_id=None):
        self.node_id = node_id or NodeID.random()
        self._network = network
        self._config = config
        self.store = ObjectStore(self.node_id, config.object_store_capacity)
        self.pool = WorkerPool(self.node_id, config.num_workers, registry)
        self.gcs = GcsClient(network)
        self.raylet = Raylet(self.node_id, self.store, self.pool, self.gcs, config)
        self.endpoint = Endpoint(raylet_endpoint_name(self.node_id))
        self.endpoint.register("SubmitTask", self._handle_submit)
        self.endpoint.register("WaitObject", self._handle_wait)
        self.endpoint.register("GetObject", self._handle_get)
        self.endpoint.register("PutObject", self._handle_put)
        self.endpoint.register("DebugState", self._handle_debug_state)
        self._stopped = threading.Event()
        self._heartbeat_thread = threading.Thread(
            target=self._heartbeat_loop, name="heartbeat", daemon=True)

    def start(self):
        self._network.attach(self.endpoint)
        self.gcs.register_node(self.node_id, self.endpoint.name)
        self.pool.start()
        self.raylet.start()
        self._heartbeat_thread.start()
        log.info("node %s up (%s)", self.node_id, self._config.describe())

    def stop(self):
        self._stopped.set()
        self.raylet.stop()
        self.pool.stop()
        self._network.detach(self.endpoint.name)
        log.info("node %s stopped", self.node_id)

    # -- RPC handlers ----------------------------------------------------

    def _handle_submit(self, req):
        spec = TaskSpec(task_id=req["task_id"], function_name=req["function"],
                        args=tuple(req["args"]), kwargs=dict(req["kwargs"]),
                        owner=req["owner"], retries_left=self._config.max_task_retries)
        ref = self.raylet.submit(spec)
        return {"ref": ref}

    def _handle_wait(self, req):
        ready = self.store.wait(req["object_id"], req["timeout"])
        return {"ready": ready}

    def _handle_get(self, req):
        try:
            return {"data": self.store.get_bytes(req["object_id"])}
        except ObjectNotFoundError:
            return {"data": None}

    def _handle_put(self, req):
        self.store.put(req["object_id"], req["value"], owner=req["owner"])
        return {"ok": True}

    def _handle_debug_state(self, _req):
        state = self.raylet.debug_state()
        state["store"] = self.store.stats()
        state["idle_workers"] = self.pool.idle_count()
        return state

    # -- background ------------------------------------------------------

    def _heartbeat_loop(self):
        interval = self._config.heartbeat_interval_s
        beats = 0
        while not self._stopped.wait(interval):
            load = self.raylet.debug_state()
            self.gcs.heartbeat(self.node_id, load)
            beats += 1
            if beats % 30 == 0:
                log.info("heartbeat #%d load=%s store=%s", beats, load, self.store.stats())
