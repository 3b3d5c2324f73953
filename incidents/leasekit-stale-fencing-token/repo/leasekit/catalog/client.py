"""Client for the catalog service."""

import logging

from leasekit.rpc import RpcError

log = logging.getLogger("leasekit.catalog.client")


class StaleFencingToken(Exception):
    pass


class CatalogClient:
    def __init__(self, channel, writer, rpc_timeout_s=2.0):
        self._channel = channel
        self._writer = writer
        self._timeout = rpc_timeout_s

    def _call(self, method, request):
        try:
            return self._channel.call(method, request, timeout=self._timeout)
        except RpcError as err:
            if err.code == "FAILED_PRECONDITION":
                raise StaleFencingToken(err.message) from err
            raise

    def placement(self):
        resp = self._channel.call("GetPlacement", {}, timeout=self._timeout)
        return resp["version"], resp["placement"]

    def assign(self, placement, token):
        resp = self._call("Assign", {"placement": placement, "token": token, "writer": self._writer})
        return resp["version"], resp["moved"]

    def report(self, pass_no, token):
        self._call("ReportController", {"pass": pass_no, "token": token, "writer": self._writer})
