"""Runtime configuration with environment overrides."""

import os
from dataclasses import dataclass, field


def _env_int(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return int(raw)


def _env_float(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return float(raw)


@dataclass
class RuntimeConfig:
    num_workers: int = field(default_factory=lambda: _env_int("MINRAY_NUM_WORKERS", 4))
    # Upper bound on objects kept in the local store before eviction starts.
    object_store_capacity: int = field(
        default_factory=lambda: _env_int("MINRAY_OBJECT_STORE_CAPACITY", 100_000))
    heartbeat_interval_s: float = field(
        default_factory=lambda: _env_float("MINRAY_HEARTBEAT_INTERVAL_S", 1.0))
    node_timeout_s: float = field(
        default_factory=lambda: _env_float("MINRAY_NODE_TIMEOUT_S", 10.0))
    get_timeout_s: float = field(
        default_factory=lambda: _env_float("MINRAY_GET_TIMEOUT_S", 60.0))
    get_progress_interval_s: float = field(
        default_factory=lambda: _env_float("MINRAY_GET_PROGRESS_INTERVAL_S", 15.0))
    max_task_retries: int = field(default_factory=lambda: _env_int("MINRAY_MAX_TASK_RETRIES", 3))
    rpc_latency_ms: float = field(default_factory=lambda: _env_float("MINRAY_RPC_LATENCY_MS", 0.0))

    def describe(self):
        return ", ".join("%s=%s" % (k, v) for k, v in sorted(self.__dict__.items()))
