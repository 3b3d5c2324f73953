package namenode

import (
	"time"
)

// ReplicationMonitor periodically schedules replication work and expires
// transfers that never completed.
type ReplicationMonitor struct {
	bm       *BlockManager
	interval time.Duration
	stopc    chan struct{}
}

// Start launches the monitor goroutine.
func (m *ReplicationMonitor) Start() {
	m.stopc = make(chan struct{})
	m.bm.ns.log.Printf("ReplicationMonitor: starting, interval %s", m.interval)
	go m.run()
}

func (m *ReplicationMonitor) run() {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-m.stopc:
			return
		case <-t.C:
		}
		start := time.Now()
		nodes := len(m.bm.dm.liveDatanodes())
		scheduled := m.bm.computeReplicationWork(nodes * m.bm.cfg.ReplicationWorkMultiplier)
		m.processPendingReplications()
		if scheduled > 0 {
			m.bm.ns.readLock()
			queued := m.bm.neededReplications.size()
			m.bm.ns.readUnlock()
			m.bm.ns.log.Printf("ReplicationMonitor: scheduled %d blocks in %s, %d blocks still need replication", scheduled, time.Since(start).Round(time.Millisecond), queued)
		}
	}
}

// processPendingReplications puts blocks whose transfers timed out back into
// the needed-replication queues.
func (m *ReplicationMonitor) processPendingReplications() {
	expired := m.bm.pending.timedOut()
	if len(expired) == 0 {
		return
	}
	m.bm.ns.writeLock()
	defer m.bm.ns.writeUnlock()
	for _, id := range expired {
		bi := m.bm.blocksMap.get(id)
		if bi == nil || bi.file == nil {
			continue
		}
		m.bm.updateNeededReplications(bi, m.bm.countLiveReplicas(bi))
	}
	m.bm.ns.log.Printf("ReplicationMonitor: %d pending replications timed out, requeued", len(expired))
}

// Stop halts the monitor.
func (m *ReplicationMonitor) Stop() { close(m.stopc) }
