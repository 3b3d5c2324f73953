"""Catalog service.

Placement writes must carry the writer's fencing token. The catalog remembers
the highest token it has accepted and refuses writes carrying a lower one, so a
deposed controller cannot overwrite decisions of its successor.
"""

import logging
import threading

from leasekit.rpc import RpcError, Service

log = logging.getLogger("leasekit.catalog.service")


class CatalogService:
    def __init__(self, name="catalog", num_shards=32):
        self.name = name
        self._lock = threading.Lock()
        self._placement = {shard: None for shard in range(num_shards)}
        self._version = 0
        self._highest_token = 0
        self._token_holder = None
        self._controller_status = {}
        self.service = Service(name)
        self.service.add("Assign", self.assign)
        self.service.add("ReportController", self.report_controller)
        self.service.add("GetPlacement", self.get_placement)

    def _admit_locked(self, token, writer):
        if token < self._highest_token:
            raise RpcError("FAILED_PRECONDITION",
                           "fencing token %d from %s is older than %d held by %s"
                           % (token, writer, self._highest_token, self._token_holder))
        if token > self._highest_token:
            log.info("fencing token advanced %d -> %d (%s)", self._highest_token, token, writer)
            self._highest_token = token
            self._token_holder = writer

    def assign(self, req):
        with self._lock:
            self._admit_locked(req["token"], req["writer"])
            moved = 0
            for shard, node in req["placement"].items():
                if self._placement.get(shard) != node:
                    self._placement[shard] = node
                    moved += 1
            if moved:
                self._version += 1
            version = self._version
        if moved:
            log.info("placement v%d: %d shard(s) moved by %s", version, moved, req["writer"])
        return {"version": version, "moved": moved}

    def report_controller(self, req):
        with self._lock:
            self._admit_locked(req["token"], req["writer"])
            self._controller_status[req["writer"]] = (req["pass"], req["token"])
        return {"ok": True}

    def get_placement(self, _req):
        with self._lock:
            return {"version": self._version, "placement": dict(self._placement)}
