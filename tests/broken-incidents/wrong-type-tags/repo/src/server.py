"""Lock server that hands out locks while a client's lease is live."""
import logging

from lease import LeaseTable

log = logging.getLogger("server")


class LockServer:
    def __init__(self, ttl_seconds=10):
        self.leases = LeaseTable(ttl_seconds)
        self.owner = None

    def acquire(self, client, now):
        if self.owner is not None and not self.leases.expired(self.owner, now):
            log.warning("lock held by %s, refusing %s", self.owner, client)
            return False
        self.owner = client
        self.leases.grant(client, now)
        return True
