"""Node-local immutable object store.

Objects are created by workers when a task returns and are *sealed* once the
value is complete. Sealed objects never change. Other components can ask to be
told when an object becomes available through :meth:`ObjectStore.subscribe`.
"""

import logging
import pickle
import threading
import time
from collections import OrderedDict

log = logging.getLogger("minray.object_store")


class ObjectStoreFullError(Exception):
    pass


class ObjectNotFoundError(KeyError):
    pass


class _Entry:
    __slots__ = ("data", "size", "owner", "sealed_at", "pins")

    def __init__(self, data, owner):
        self.data = data
        self.size = len(data)
        self.owner = owner
        self.sealed_at = time.monotonic()
        self.pins = 0


class ObjectStore:
    def __init__(self, node_id, capacity):
        self._node_id = node_id
        self._capacity = capacity
        self._lock = threading.Lock()
        self._objects = OrderedDict()
        self._subscribers = {}
        self._bytes = 0
        self._evictions = 0

    # -- queries ---------------------------------------------------------

    def contains(self, object_id):
        with self._lock:
            return object_id in self._objects

    def stats(self):
        with self._lock:
            return {
                "objects": len(self._objects),
                "bytes": self._bytes,
                "evictions": self._evictions,
                "subscriptions": sum(len(v) for v in self._subscribers.values()),
            }

    # -- writes ----------------------------------------------------------

    def put(self, object_id, value, owner):
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self.seal(object_id, data, owner)

    def seal(self, object_id, data, owner):
        with self._lock:
            if object_id in self._objects:
                log.warning("object %s sealed twice; keeping first copy", object_id)
                return
            if len(self._objects) >= self._capacity:
                self._evict_locked()
            self._objects[object_id] = _Entry(data, owner)
            self._bytes += len(data)
            callbacks = self._subscribers.pop(object_id, [])
        log.info("object %s sealed by %s (%d bytes); notifying %d waiters",
                 object_id, owner, len(data), len(callbacks))
        for callback in callbacks:
            try:
                callback(object_id)
            except Exception:
                log.exception("subscriber callback for %s failed", object_id)

    def _evict_locked(self):
        for object_id, entry in self._objects.items():
            if entry.pins == 0:
                del self._objects[object_id]
                self._bytes -= entry.size
                self._evictions += 1
                log.debug("evicted object %s (%d bytes)", object_id, entry.size)
                return
        raise ObjectStoreFullError("all %d objects are pinned" % len(self._objects))

    # -- reads -----------------------------------------------------------

    def get_bytes(self, object_id):
        with self._lock:
            entry = self._objects.get(object_id)
            if entry is None:
                raise ObjectNotFoundError(object_id)
            self._objects.move_to_end(object_id)
            return entry.data

    def get(self, object_id):
        return pickle.loads(self.get_bytes(object_id))

    def pin(self, object_id):
        with self._lock:
            entry = self._objects.get(object_id)
            if entry is not None:
                entry.pins += 1
                return True
            return False

    def unpin(self, object_id):
        with self._lock:
            entry = self._objects.get(object_id)
            if entry is not None and entry.pins > 0:
                entry.pins -= 1

    # -- notifications ---------------------------------------------------

    def subscribe(self, object_id, callback):
        """Call ``callback(object_id)`` once the object is sealed."""
        with self._lock:
            self._subscribers.setdefault(object_id, []).append(callback)
            pending = len(self._subscribers[object_id])
        log.debug("subscribed to %s (%d subscribers)", object_id, pending)

    def unsubscribe(self, object_id, callback):
        with self._lock:
            callbacks = self._subscribers.get(object_id)
            if not callbacks:
                return
            try:
                callbacks.remove(callback)
            except ValueError:
                return
            if not callbacks:
                del self._subscribers[object_id]

    def wait(self, object_id, timeout):
        """Block until the object is sealed or ``timeout`` elapses."""
        done = threading.Event()
        self.subscribe(object_id, lambda _oid: done.set())
        if self.contains(object_id):
            return True
        return done.wait(timeout)
