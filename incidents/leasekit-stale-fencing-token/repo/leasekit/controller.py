"""Placement controller: keeps shards spread evenly over live nodes.

Only the elected leader runs reconcile passes. Every pass reports itself to the
catalog under the leader's fencing token and then moves shards whose owner is
not alive or that exceed the fair share of their owner.
"""

import logging
import threading


log = logging.getLogger("leasekit.controller")


def plan_placement(placement, live_nodes):
    """Return the shards that must move, as {shard: new_owner}."""
    if not live_nodes:
        return {}
    nodes = sorted(live_nodes)
    fair = -(-len(placement) // len(nodes))
    load = {n: 0 for n in nodes}
    orphans = []
    for shard in sorted(placement):
        owner = placement[shard]
        if owner in load and load[owner] < fair:
            load[owner] += 1
        else:
            orphans.append(shard)
    moves = {}
    for shard in orphans:
        target = min(nodes, key=lambda n: (load[n], n))
        load[target] += 1
        moves[shard] = target
    return moves


class PlacementController:
    def __init__(self, node_id, elector, catalog, membership, interval_s=1.0, on_fatal=None):
        self._node_id = node_id
        self._elector = elector
        self._catalog = catalog
        self._membership = membership
        self._interval = interval_s
        self._on_fatal = on_fatal
        self._passes = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="controller", daemon=True)
        elector.add_listener(self._on_leadership)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stopped.set()

    def _on_leadership(self, is_leader, token):
        if is_leader:
            log.info("%s taking over placement with token %d", self._node_id, token)
        else:
            log.info("%s no longer controls placement (token %d)", self._node_id, token)

    def _loop(self):
        try:
            while not self._stopped.wait(self._interval):
                if self._elector.is_leader():
                    self.reconcile()
        except Exception as exc:
            log.exception("placement controller on %s stopped", self._node_id)
            if self._on_fatal is not None:
                self._on_fatal(exc)

    def reconcile(self):
        token = self._elector.fencing_token()
        if token is None:
            return
        self._passes += 1
        self._catalog.report(self._passes, token)
        version, placement = self._catalog.placement()
        live = self._membership.live_nodes()
        moves = plan_placement(placement, live)
        if not moves:
            if self._passes % 30 == 0:
                log.info("pass %d: placement v%d balanced over %d node(s)",
                         self._passes, version, len(live))
            return
        new_version, moved = self._catalog.assign(moves, token)
        log.info("pass %d: moved %d shard(s), placement v%d -> v%d",
                 self._passes, moved, version, new_version)
