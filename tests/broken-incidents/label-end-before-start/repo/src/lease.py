"""Lease table for a tiny lock service."""
import logging
import time

log = logging.getLogger("lease")


class LeaseTable:
    def __init__(self, ttl_seconds):
        self.ttl = ttl_seconds
        self.leases = {}

    def grant(self, client, now=None):
        now = time.time() if now is None else now
        expiry = now + self.ttl * 1000
        self.leases[client] = expiry
        log.info("granted lease to %s until %s", client, expiry)
        return expiry

    def expired(self, client, now):
        expiry = self.leases.get(client)
        if expiry is None:
            return True
        return now > expiry
