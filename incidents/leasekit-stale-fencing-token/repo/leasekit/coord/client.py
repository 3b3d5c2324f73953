"""Typed client for the coordination server."""

import logging
from dataclasses import dataclass

from leasekit.rpc import RpcError

log = logging.getLogger("leasekit.coord.client")


@dataclass(frozen=True)
class LeaseGrant:
    lease_id: int
    ttl: float
    expires_at: float


@dataclass(frozen=True)
class Claim:
    created: bool
    owner: str
    token: int


class LeaseNotFound(Exception):
    pass


class CoordClient:
    def __init__(self, channel, rpc_timeout_s=1.5):
        self._channel = channel
        self._timeout = rpc_timeout_s

    def grant(self, ttl, holder):
        resp = self._channel.call("Grant", {"ttl": ttl, "holder": holder}, timeout=self._timeout)
        return LeaseGrant(resp["lease_id"], resp["ttl"], resp["expires_at"])

    def keepalive(self, lease_id):
        try:
            resp = self._channel.call("KeepAlive", {"lease_id": lease_id}, timeout=self._timeout)
        except RpcError as err:
            if err.code == "NOT_FOUND":
                raise LeaseNotFound("lease %x" % lease_id) from err
            raise
        return LeaseGrant(resp["lease_id"], resp["ttl"], resp["expires_at"])

    def revoke(self, lease_id):
        return self._channel.call("Revoke", {"lease_id": lease_id}, timeout=self._timeout)["revoked"]

    def claim(self, key, owner, lease_id):
        resp = self._channel.call("PutIfAbsent", {"key": key, "value": owner, "lease_id": lease_id},
                                  timeout=self._timeout)
        return Claim(resp["created"], resp["value"], resp["create_revision"])

    def read(self, key):
        resp = self._channel.call("Get", {"key": key}, timeout=self._timeout)
        if not resp["found"]:
            return None
        return Claim(False, resp["value"], resp["create_revision"])
