package namenode

import "time"

// Config holds namenode tunables.
type Config struct {
	HeartbeatInterval          time.Duration
	HeartbeatRecheckInterval   time.Duration
	ReplicationInterval        time.Duration
	ReplicationWorkMultiplier  int
	MaxReplicationStreams      int
	PendingReplicationTimeout  time.Duration
	InvalidateLimitPerHeartbeat int
}

// DefaultConfig mirrors the shipped strata-site defaults.
func DefaultConfig() Config {
	return Config{
		HeartbeatInterval:           3 * time.Second,
		HeartbeatRecheckInterval:    5 * time.Minute,
		ReplicationInterval:         3 * time.Second,
		ReplicationWorkMultiplier:   2,
		MaxReplicationStreams:       2,
		PendingReplicationTimeout:   5 * time.Minute,
		InvalidateLimitPerHeartbeat: 1000,
	}
}

// deadInterval is how long a datanode may stay silent before it is dead.
func (c Config) deadInterval() time.Duration {
	return 2*c.HeartbeatRecheckInterval + 10*c.HeartbeatInterval
}
