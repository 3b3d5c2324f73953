"""Coordination server.

Keys may be attached to a lease; when the lease is not kept alive for ``ttl``
seconds it expires and every attached key is deleted. Each mutation bumps a
global revision; a key's ``create_revision`` is the revision at which it was
created and serves as a fencing token for whoever created it.
"""

import itertools
import logging
import threading
from dataclasses import dataclass, field

from leasekit.clock import DEFAULT_CLOCK
from leasekit.rpc import RpcError, Service

log = logging.getLogger("leasekit.coord.server")

MIN_TTL_S = 2.0


@dataclass
class _Lease:
    lease_id: int
    ttl: float
    holder: str
    deadline: float  # server monotonic time
    keys: set = field(default_factory=set)


@dataclass
class _KeyValue:
    value: str
    create_revision: int
    mod_revision: int
    lease_id: int = 0


class CoordServer:
    def __init__(self, name="coord-0", clock=DEFAULT_CLOCK, sweep_interval_s=0.25):
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._leases = {}
        self._data = {}
        self._revision = 100
        self._lease_ids = itertools.count(0x7f20)
        self._sweep_interval = sweep_interval_s
        self._stopped = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep_loop, name="lease-sweeper", daemon=True)
        self.service = Service(name)
        self.service.add("Grant", self.grant)
        self.service.add("KeepAlive", self.keepalive)
        self.service.add("Revoke", self.revoke)
        self.service.add("PutIfAbsent", self.put_if_absent)
        self.service.add("Get", self.get)
        self.service.add("Delete", self.delete)

    def start(self):
        self._sweeper.start()
        log.info("coordination server %s started at revision %d", self.name, self._revision)

    def stop(self):
        self._stopped.set()

    # -- leases ----------------------------------------------------------

    def grant(self, req):
        ttl = float(req["ttl"])
        if ttl < MIN_TTL_S:
            raise RpcError("INVALID_ARGUMENT", "ttl %.1f below minimum %.1f" % (ttl, MIN_TTL_S))
        with self._lock:
            lease_id = next(self._lease_ids)
            self._leases[lease_id] = _Lease(lease_id, ttl, req["holder"],
                                            self._clock.monotonic() + ttl)
        log.info("granted lease %x ttl=%.1fs to %s", lease_id, ttl, req["holder"])
        return {"lease_id": lease_id, "ttl": ttl, "expires_at": self._clock.wall() + ttl}

    def keepalive(self, req):
        lease_id = req["lease_id"]
        with self._lock:
            lease = self._leases.get(lease_id)
            if lease is None:
                raise RpcError("NOT_FOUND", "lease %x not found" % lease_id)
            lease.deadline = self._clock.monotonic() + lease.ttl
            ttl = lease.ttl
        return {"lease_id": lease_id, "ttl": ttl, "expires_at": self._clock.wall() + ttl}

    def revoke(self, req):
        lease_id = req["lease_id"]
        with self._lock:
            lease = self._leases.pop(lease_id, None)
            if lease is None:
                return {"revoked": False}
            self._drop_keys_locked(lease)
        log.info("revoked lease %x held by %s", lease_id, lease.holder)
        return {"revoked": True}

    def _drop_keys_locked(self, lease):
        for key in lease.keys:
            kv = self._data.get(key)
            if kv is not None and kv.lease_id == lease.lease_id:
                del self._data[key]
                self._revision += 1

    def _sweep_loop(self):
        while not self._stopped.wait(self._sweep_interval):
            now = self._clock.monotonic()
            expired = []
            with self._lock:
                for lease_id, lease in list(self._leases.items()):
                    if lease.deadline <= now:
                        del self._leases[lease_id]
                        self._drop_keys_locked(lease)
                        expired.append(lease)
            for lease in expired:
                log.warning("lease %x held by %s expired; deleted keys %s",
                            lease.lease_id, lease.holder, sorted(lease.keys))

    # -- keys ------------------------------------------------------------

    def put_if_absent(self, req):
        key, value, lease_id = req["key"], req["value"], req.get("lease_id", 0)
        with self._lock:
            current = self._data.get(key)
            if current is not None:
                return {"created": False, "value": current.value,
                        "create_revision": current.create_revision}
            if lease_id:
                lease = self._leases.get(lease_id)
                if lease is None:
                    raise RpcError("NOT_FOUND", "lease %x not found" % lease_id)
                lease.keys.add(key)
            self._revision += 1
            self._data[key] = _KeyValue(value, self._revision, self._revision, lease_id)
            revision = self._revision
        log.info("created %s=%s at revision %d (lease %x)", key, value, revision, lease_id)
        return {"created": True, "value": value, "create_revision": revision}

    def get(self, req):
        with self._lock:
            kv = self._data.get(req["key"])
            if kv is None:
                return {"found": False, "revision": self._revision}
            return {"found": True, "value": kv.value, "create_revision": kv.create_revision,
                    "mod_revision": kv.mod_revision, "revision": self._revision}

    def delete(self, req):
        with self._lock:
            kv = self._data.pop(req["key"], None)
            if kv is None:
                return {"deleted": False}
            self._revision += 1
        return {"deleted": True}
