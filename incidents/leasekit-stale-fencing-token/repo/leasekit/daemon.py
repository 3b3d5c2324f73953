"""leasekitd: one placement-controller replica.

Every replica campaigns for leadership; the leader runs the placement
controller. Configuration comes from a small ``key = value`` file.
"""

import argparse
import logging
import signal
import sys
import threading

from leasekit.catalog.client import CatalogClient
from leasekit.clock import DEFAULT_CLOCK
from leasekit.controller import PlacementController
from leasekit.coord.client import CoordClient
from leasekit.election import LeaderElector
from leasekit.membership import StaticMembership

log = logging.getLogger("leasekit.daemon")

LEADER_KEY = "/leasekit/placement/leader"

DEFAULTS = {
    "node_id": "node-0",
    "nodes": "node-0",
    "lease_ttl_s": "10",
    "lease_safety_margin_s": "1",
    "reconcile_interval_s": "1",
    "coord_rpc_timeout_s": "1.5",
    "catalog_rpc_timeout_s": "2",
}

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"


def load_config(path):
    config = dict(DEFAULTS)
    if path:
        with open(path) as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                if "=" not in line:
                    raise ValueError("%s:%d: expected key = value" % (path, lineno))
                key, value = (p.strip() for p in line.split("=", 1))
                if key not in DEFAULTS:
                    log.warning("%s:%d: unknown setting %s ignored", path, lineno, key)
                    continue
                config[key] = value
    return config


class Daemon:
    def __init__(self, config, coord_channel, catalog_channel, clock=DEFAULT_CLOCK):
        self.node_id = config["node_id"]
        self._done = threading.Event()
        self.exit_code = 0
        coord = CoordClient(coord_channel, float(config["coord_rpc_timeout_s"]))
        self.elector = LeaderElector(coord, self.node_id, LEADER_KEY,
                                     ttl_s=float(config["lease_ttl_s"]),
                                     safety_margin_s=float(config["lease_safety_margin_s"]),
                                     clock=clock)
        catalog = CatalogClient(catalog_channel, self.node_id, float(config["catalog_rpc_timeout_s"]))
        membership = StaticMembership(config["nodes"].split(","))
        self.controller = PlacementController(self.node_id, self.elector, catalog, membership,
                                              interval_s=float(config["reconcile_interval_s"]),
                                              on_fatal=self._fatal)

    def _fatal(self, exc):
        log.critical("%s: fatal error in placement controller, shutting down: %s", self.node_id, exc)
        self.exit_code = 70
        self._done.set()

    def start(self):
        log.info("starting leasekitd %s", self.node_id)
        self.elector.start()
        self.controller.start()

    def wait(self, timeout=None):
        return self._done.wait(timeout)

    def shutdown(self):
        self.controller.stop()
        self.elector.stop()
        log.info("leasekitd %s stopped (exit code %d)", self.node_id, self.exit_code)
        self._done.set()


def main(argv=None, connect=None):
    parser = argparse.ArgumentParser(prog="leasekitd")
    parser.add_argument("--config")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    config = load_config(args.config)
    if connect is None:
        log.error("no transport configured; leasekitd must be embedded by a deployment runner")
        return 2
    coord_channel, catalog_channel = connect(config)
    daemon = Daemon(config, coord_channel, catalog_channel)
    signal.signal(signal.SIGTERM, lambda *_: daemon.shutdown())
    daemon.start()
    daemon.wait()
    daemon.shutdown()
    return daemon.exit_code


if __name__ == "__main__":
    sys.exit(main())
