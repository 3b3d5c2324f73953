"""Minimal request/response channel between leasekit services."""

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

log = logging.getLogger("leasekit.rpc")


class RpcError(Exception):
    """The remote handler raised; carries the remote error code."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class RpcTimeout(Exception):
    pass


class Unavailable(Exception):
    pass


class Service:
    """Server side: a named set of handlers."""

    def __init__(self, name):
        self.name = name
        self._handlers = {}

    def handler(self, method):
        def wrap(fn):
            self._handlers[method] = fn
            return fn
        return wrap

    def add(self, method, fn):
        self._handlers[method] = fn

    def invoke(self, method, request):
        fn = self._handlers.get(method)
        if fn is None:
            raise RpcError("UNIMPLEMENTED", "%s.%s" % (self.name, method))
        return fn(request)


class Channel:
    """Client side of a connection to one service.

    ``interceptors`` are called with (method, request) before dispatch and may
    delay or refuse the call; they are how deployments add tracing and how tests
    inject faults.
    """

    def __init__(self, service, default_timeout=2.0, interceptors=None, workers=4):
        self._service = service
        self._timeout = default_timeout
        self._interceptors = list(interceptors or [])
        self._pool = ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix="rpc-%s" % service.name)
        self._closed = threading.Event()

    def add_interceptor(self, interceptor):
        self._interceptors.append(interceptor)

    def call(self, method, request, timeout=None):
        if self._closed.is_set():
            raise Unavailable("channel to %s is closed" % self._service.name)
        timeout = self._timeout if timeout is None else timeout
        fut = self._pool.submit(self._dispatch, method, request)
        try:
            status, payload = fut.result(timeout=timeout)
        except FutureTimeout:
            raise RpcTimeout("%s.%s timed out after %.1fs" % (self._service.name, method, timeout))
        if status == "ok":
            return payload
        if status == "unavailable":
            raise Unavailable(payload)
        code, message = payload
        raise RpcError(code, message)

    def _dispatch(self, method, request):
        """Runs on the transport thread; returns a (status, payload) envelope."""
        try:
            for interceptor in self._interceptors:
                interceptor(method, request)
            return "ok", self._service.invoke(method, request)
        except Unavailable as exc:
            return "unavailable", str(exc)
        except RpcError as exc:
            return "error", (exc.code, exc.message)
        except Exception as exc:
            log.exception("handler %s.%s failed", self._service.name, method)
            return "error", ("INTERNAL", "%s: %s" % (type(exc).__name__, exc))

    def close(self):
        self._closed.set()
        self._pool.shutdown(wait=False)
