"""Nightly feature pipeline: shard -> parse -> aggregate, run on a minray node."""

import argparse
import logging
import sys

from minray.client import Client, GetTimeoutError
from minray.config import RuntimeConfig
from minray.gcs import GcsServer
from minray.node import Node
from minray.transport import Network
from minray.worker import FunctionRegistry

log = logging.getLogger("etl")


def load_shard(shard):
    return [("user%d" % (shard * 100 + i), i % 7) for i in range(100)]


def parse(rows):
    return {k: v for k, v in rows if v}


def aggregate(*parts):
    total = {}
    for part in parts:
        for k, v in part.items():
            total[k] = total.get(k, 0) + v
    return len(total), sum(total.values())


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s")
    config = RuntimeConfig()
    network = Network(latency_ms=config.rpc_latency_ms)
    GcsServer(network, config.node_timeout_s)
    registry = FunctionRegistry()
    for fn in (load_shard, parse, aggregate):
        registry.export(fn.__name__, fn)
    node = Node(network, registry, config)
    node.start()
    client = Client(network, node.gcs, node.node_id, config, driver_name="etl-nightly")
    try:
        for rnd in range(args.rounds):
            parsed = []
            for shard in range(args.shards):
                raw = client.submit("load_shard", shard)
                parsed.append(client.submit("parse", raw))
            result = client.submit("aggregate", *parsed)
            users, events = client.get(result)
            log.info("round %d: %d users, %d events", rnd, users, events)
    except GetTimeoutError as exc:
        log.error("pipeline failed: %s", exc)
        log.error("raylet state: %s", client.debug_state())
        return 1
    finally:
        node.stop()
        network.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
