package namenode

import (
	"fmt"
	"sync"
	"time"

	"github.com/stratafs/strata/proto"
)

type transferCmd struct {
	block   *BlockInfo
	targets []*DatanodeDescriptor
}

// DatanodeDescriptor is the namenode's view of one datanode.
type DatanodeDescriptor struct {
	proto.DatanodeRegistration

	lastHeartbeat time.Time
	remaining     int64
	used          int64
	xceivers      int
	alive         bool
	decommission  bool

	blocks map[proto.BlockID]*BlockInfo

	// Commands waiting for the next heartbeat; guarded by cmdMu.
	cmdMu         sync.Mutex
	transfers     []transferCmd
	invalidations []proto.Block
}

func newDatanodeDescriptor(reg proto.DatanodeRegistration) *DatanodeDescriptor {
	return &DatanodeDescriptor{DatanodeRegistration: reg, alive: true, blocks: make(map[proto.BlockID]*BlockInfo)}
}

func (d *DatanodeDescriptor) String() string { return d.Addr }

func (d *DatanodeDescriptor) addBlock(bi *BlockInfo)    { d.blocks[bi.ID] = bi }
func (d *DatanodeDescriptor) removeBlock(bi *BlockInfo) { delete(d.blocks, bi.ID) }
func (d *DatanodeDescriptor) numBlocks() int            { return len(d.blocks) }

func (d *DatanodeDescriptor) pendingTransfers() int {
	d.cmdMu.Lock()
	defer d.cmdMu.Unlock()
	return len(d.transfers)
}

func (d *DatanodeDescriptor) addTransfer(bi *BlockInfo, targets []*DatanodeDescriptor) {
	d.cmdMu.Lock()
	d.transfers = append(d.transfers, transferCmd{block: bi, targets: targets})
	d.cmdMu.Unlock()
}

func (d *DatanodeDescriptor) addInvalidation(b proto.Block) {
	d.cmdMu.Lock()
	d.invalidations = append(d.invalidations, b)
	d.cmdMu.Unlock()
}

// drainCommands hands out queued work, at most limit invalidations.
func (d *DatanodeDescriptor) drainCommands(limit int) []proto.DatanodeCommand {
	d.cmdMu.Lock()
	defer d.cmdMu.Unlock()
	var cmds []proto.DatanodeCommand
	if len(d.transfers) > 0 {
		c := proto.DatanodeCommand{Action: proto.ActionTransfer}
		for _, t := range d.transfers {
			c.Blocks = append(c.Blocks, t.block.Block)
			addrs := make([]string, len(t.targets))
			for i, tg := range t.targets {
				addrs[i] = tg.Addr
			}
			c.Targets = append(c.Targets, addrs)
		}
		d.transfers = nil
		cmds = append(cmds, c)
	}
	if n := len(d.invalidations); n > 0 {
		if n > limit {
			n = limit
		}
		cmds = append(cmds, proto.DatanodeCommand{Action: proto.ActionInvalidate, Blocks: append([]proto.Block(nil), d.invalidations[:n]...)})
		d.invalidations = d.invalidations[n:]
	}
	return cmds
}

// DatanodeManager tracks registered datanodes and their liveness.
type DatanodeManager struct {
	ns  *Namesystem
	cfg Config

	mu        sync.RWMutex
	datanodes map[string]*DatanodeDescriptor
}

func newDatanodeManager(ns *Namesystem, cfg Config) *DatanodeManager {
	return &DatanodeManager{ns: ns, cfg: cfg, datanodes: make(map[string]*DatanodeDescriptor)}
}

func (m *DatanodeManager) register(reg proto.DatanodeRegistration) *DatanodeDescriptor {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dn, ok := m.datanodes[reg.UUID]; ok {
		dn.DatanodeRegistration = reg
		dn.alive = true
		dn.lastHeartbeat = time.Now()
		m.ns.log.Printf("BLOCK* registerDatanode: node restarted: %s (%s)", reg.Addr, reg.UUID)
		return dn
	}
	dn := newDatanodeDescriptor(reg)
	dn.lastHeartbeat = time.Now()
	m.datanodes[reg.UUID] = dn
	m.ns.log.Printf("BLOCK* registerDatanode: from %s storage %s rack %s", reg.Addr, reg.UUID, reg.Rack)
	return dn
}

func (m *DatanodeManager) getDatanode(reg proto.DatanodeRegistration) (*DatanodeDescriptor, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	dn, ok := m.datanodes[reg.UUID]
	if !ok || !dn.alive {
		return nil, fmt.Errorf("datanode %s (%s) is not registered", reg.Addr, reg.UUID)
	}
	return dn, nil
}

func (m *DatanodeManager) handleHeartbeat(dn *DatanodeDescriptor, hb proto.Heartbeat) {
	m.mu.Lock()
	dn.lastHeartbeat = time.Now()
	dn.remaining = hb.Remaining
	dn.used = hb.Used
	dn.xceivers = hb.XceiverCount
	m.mu.Unlock()
}

// liveDatanodes returns a snapshot of the nodes that are alive and not
// being decommissioned.
func (m *DatanodeManager) liveDatanodes() []*DatanodeDescriptor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*DatanodeDescriptor, 0, len(m.datanodes))
	for _, dn := range m.datanodes {
		if dn.alive && !dn.decommission {
			out = append(out, dn)
		}
	}
	return out
}

func (m *DatanodeManager) startHeartbeatMonitor() {
	go func() {
		t := time.NewTicker(m.cfg.HeartbeatRecheckInterval)
		defer t.Stop()
		for range t.C {
			m.heartbeatCheck()
		}
	}()
}

func (m *DatanodeManager) heartbeatCheck() {
	deadline := time.Now().Add(-m.cfg.deadInterval())
	var dead []*DatanodeDescriptor
	m.mu.Lock()
	for _, dn := range m.datanodes {
		if dn.alive && dn.lastHeartbeat.Before(deadline) {
			dn.alive = false
			dead = append(dead, dn)
		}
	}
	m.mu.Unlock()
	for _, dn := range dead {
		m.ns.log.Printf("BLOCK* heartbeatCheck: lost heartbeat from %s, removing its %d replicas", dn, dn.numBlocks())
		m.ns.writeLock()
		m.ns.bm.removeBlocksAssociatedTo(dn)
		m.ns.writeUnlock()
	}
}
