"""Node membership as seen by the placement controller."""

import logging
import threading

log = logging.getLogger("leasekit.membership")


class StaticMembership:
    """Membership from configuration, with nodes marked down by health probes."""

    def __init__(self, nodes, probe=None, clock=None):
        self._nodes = list(nodes)
        self._probe = probe
        self._down = set()
        self._lock = threading.Lock()

    def mark_down(self, node):
        with self._lock:
            if node not in self._down:
                self._down.add(node)
                log.warning("node %s marked down", node)

    def mark_up(self, node):
        with self._lock:
            if node in self._down:
                self._down.discard(node)
                log.info("node %s is back", node)

    def probe_all(self):
        if self._probe is None:
            return
        for node in self._nodes:
            if self._probe(node):
                self.mark_up(node)
            else:
                self.mark_down(node)

    def live_nodes(self):
        with self._lock:
            return [n for n in self._nodes if n not in self._down]
