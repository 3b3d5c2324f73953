"""Leader election on top of coordination-service leases.

A candidate grants itself a lease and tries to create the election key
attached to it. Whoever creates the key is leader; the key's create revision is
the leader's fencing token. The leader keeps the lease alive in the background
and must stop acting as leader before the coordination service could have
expired the lease and let somebody else in.
"""

import logging
import threading

from leasekit.clock import DEFAULT_CLOCK
from leasekit.coord.client import LeaseNotFound
from leasekit.rpc import RpcError, RpcTimeout, Unavailable

log = logging.getLogger("leasekit.election")


class LeaderElector:
    def __init__(self, coord, node_id, key, ttl_s=10.0, renew_interval_s=None,
                 safety_margin_s=1.0, clock=DEFAULT_CLOCK):
        if safety_margin_s >= ttl_s:
            raise ValueError("safety margin must be smaller than the lease ttl")
        self._coord = coord
        self._node_id = node_id
        self._key = key
        self._ttl = ttl_s
        self._renew_interval = renew_interval_s or ttl_s / 3.0
        self._margin = safety_margin_s
        self._clock = clock
        self._lock = threading.RLock()
        self._lease_id = None
        self._token = None
        self._valid_until = 0.0
        self._listeners = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="elector", daemon=True)

    # -- public ----------------------------------------------------------

    def add_listener(self, callback):
        """``callback(is_leader, token)`` on every leadership change."""
        self._listeners.append(callback)

    def start(self):
        log.info("%s campaigning for %s (ttl=%.1fs renew every %.1fs)",
                 self._node_id, self._key, self._ttl, self._renew_interval)
        self._thread.start()

    def stop(self):
        self._stopped.set()
        self._thread.join(timeout=self._ttl)
        with self._lock:
            lease_id = self._lease_id
        if lease_id is not None:
            try:
                self._coord.revoke(lease_id)
            except (RpcError, RpcTimeout, Unavailable) as exc:
                log.warning("could not revoke lease %x on shutdown: %s", lease_id, exc)
            self._step_down("shutdown")

    def is_leader(self):
        with self._lock:
            return self._lease_id is not None and self._clock.wall() < self._valid_until

    def fencing_token(self):
        with self._lock:
            return self._token

    def remaining(self):
        with self._lock:
            return max(0.0, self._valid_until - self._clock.wall())

    # -- loop ------------------------------------------------------------

    def _run(self):
        while not self._stopped.is_set():
            try:
                if self._lease_id is None:
                    self._campaign()
                    interval = self._renew_interval
                else:
                    self._renew()
                    interval = self._renew_interval
            except (RpcError, RpcTimeout, Unavailable) as exc:
                log.warning("election round failed: %s", exc)
                interval = min(self._renew_interval, 1.0)
            self._stopped.wait(interval)

    def _campaign(self):
        grant = self._coord.grant(self._ttl, self._node_id)
        claim = self._coord.claim(self._key, self._node_id, grant.lease_id)
        if not claim.created:
            self._coord.revoke(grant.lease_id)
            log.debug("%s is held by %s (token %d)", self._key, claim.owner, claim.token)
            return
        with self._lock:
            self._lease_id = grant.lease_id
            self._token = claim.token
            self._extend(grant)
        log.info("%s became leader for %s with token %d (lease %x)",
                 self._node_id, self._key, claim.token, grant.lease_id)
        self._notify(True, claim.token)

    def _renew(self):
        lease_id = self._lease_id
        try:
            grant = self._coord.keepalive(lease_id)
        except LeaseNotFound:
            log.warning("lease %x is gone on the coordination service", lease_id)
            self._step_down("lease lost")
            return
        except (RpcTimeout, Unavailable) as exc:
            left = self.remaining()
            log.warning("keepalive for lease %x failed: %s; lease valid for another %.1fs",
                        lease_id, exc, left)
            if left <= 0:
                self._step_down("lease could not be renewed in time")
            return
        with self._lock:
            self._extend(grant)
        log.debug("renewed lease %x, %.1fs left", lease_id, self.remaining())

    def _extend(self, grant):
        # Leave a margin so that we give up before the server expires the lease.
        self._valid_until = grant.expires_at - self._margin

    def _step_down(self, reason):
        with self._lock:
            if self._lease_id is None:
                return
            lease_id, token = self._lease_id, self._token
            self._lease_id = None
            self._token = None
            self._valid_until = 0.0
        log.warning("%s stepping down from %s (lease %x, token %d): %s",
                    self._node_id, self._key, lease_id, token, reason)
        self._notify(False, token)

    def _notify(self, is_leader, token):
        for callback in self._listeners:
            try:
                callback(is_leader, token)
            except Exception:
                log.exception("leadership listener failed")
