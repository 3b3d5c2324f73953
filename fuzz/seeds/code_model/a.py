"""leasekit: shard placement controller with lease-based leader election."""

__version__ = "2.3.1"
