"""Shard catalog: the authoritative shard -> node placement table."""
