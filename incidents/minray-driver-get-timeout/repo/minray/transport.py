"""In-process RPC transport used between drivers, raylets and the GCS.

Every endpoint registers handlers by method name. Calls are delivered on a
small thread pool so that callers never execute handler code on their own
stack, mimicking a real network hop.
"""

import logging
import queue
import threading
import time
from concurrent.futures import Future

log = logging.getLogger("minray.transport")


class RpcError(Exception):
    pass


class Endpoint:
    def __init__(self, name):
        self.name = name
        self._handlers = {}

    def register(self, method, handler):
        if method in self._handlers:
            raise ValueError("handler for %s already registered on %s" % (method, self.name))
        self._handlers[method] = handler

    def dispatch(self, method, payload):
        handler = self._handlers.get(method)
        if handler is None:
            raise RpcError("%s: no such method %s" % (self.name, method))
        return handler(payload)


class Network:
    """Routes calls to named endpoints."""

    def __init__(self, latency_ms=0.0, num_threads=8):
        self._endpoints = {}
        self._latency = latency_ms / 1000.0
        self._calls = queue.Queue()
        self._threads = []
        self._closed = threading.Event()
        for i in range(num_threads):
            t = threading.Thread(target=self._loop, name="rpc-%d" % i, daemon=True)
            t.start()
            self._threads.append(t)

    def attach(self, endpoint):
        self._endpoints[endpoint.name] = endpoint
        log.debug("endpoint %s attached", endpoint.name)

    def detach(self, name):
        self._endpoints.pop(name, None)
        log.info("endpoint %s detached", name)

    def call(self, target, method, payload):
        fut = Future()
        self._calls.put((target, method, payload, fut))
        return fut

    def call_sync(self, target, method, payload, timeout=None):
        return self.call(target, method, payload).result(timeout=timeout)

    def _loop(self):
        while not self._closed.is_set():
            try:
                target, method, payload, fut = self._calls.get(timeout=0.2)
            except queue.Empty:
                continue
            if self._latency:
                time.sleep(self._latency)
            endpoint = self._endpoints.get(target)
            if endpoint is None:
                fut.set_exception(RpcError("unreachable endpoint %s" % target))
                continue
            try:
                fut.set_result(endpoint.dispatch(method, payload))
            except Exception as exc:  # delivered to the caller
                log.debug("rpc %s.%s failed: %s", target, method, exc)
                fut.set_exception(exc)

    def close(self):
        self._closed.set()
        for t in self._threads:
            t.join(timeout=1.0)
