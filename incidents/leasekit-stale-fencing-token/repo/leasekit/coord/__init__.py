"""Coordination service: a small linearizable KV store with leases."""
