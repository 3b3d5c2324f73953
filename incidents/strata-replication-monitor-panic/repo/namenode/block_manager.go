package namenode

import (
	"github.com/stratafs/strata/proto"
)

// BlockManager keeps track of where replicas live and drives replication
// and invalidation. Unless stated otherwise, its methods must be called with
// the namesystem write lock held.
type BlockManager struct {
	ns  *Namesystem
	dm  *DatanodeManager
	cfg Config

	blocksMap          *BlocksMap
	neededReplications *underReplicatedBlocks
	pending            *pendingReplications

	// Block operations from datanodes are applied in order, under the
	// namesystem write lock, by a single goroutine.
	blockOps chan func()
	monitor  *ReplicationMonitor
}

func newBlockManager(ns *Namesystem, dm *DatanodeManager, cfg Config) *BlockManager {
	bm := &BlockManager{
		ns:                 ns,
		dm:                 dm,
		cfg:                cfg,
		blocksMap:          newBlocksMap(),
		neededReplications: newUnderReplicatedBlocks(),
		pending:            newPendingReplications(cfg.PendingReplicationTimeout),
		blockOps:           make(chan func(), 1024),
	}
	bm.monitor = &ReplicationMonitor{bm: bm, interval: cfg.ReplicationInterval}
	return bm
}

func (bm *BlockManager) startDaemons() {
	go bm.processBlockOps()
	bm.monitor.Start()
}

// enqueueBlockOp hands an operation to the block report processing
// goroutine. It may be called without any lock held.
func (bm *BlockManager) enqueueBlockOp(op func()) {
	bm.blockOps <- op
}

func (bm *BlockManager) processBlockOps() {
	for op := range bm.blockOps {
		bm.ns.writeLock()
		op()
		bm.ns.writeUnlock()
	}
}

func (bm *BlockManager) addBlockCollection(b proto.Block, f *INodeFile) *BlockInfo {
	bi := &BlockInfo{Block: b, file: f}
	bm.blocksMap.add(bi)
	return bi
}

// removeBlock is called when the file owning bi is deleted: every replica is
// scheduled for invalidation and the block is forgotten.
func (bm *BlockManager) removeBlock(bi *BlockInfo) {
	for _, dn := range bi.storages {
		dn.addInvalidation(bi.Block)
	}
	bm.neededReplications.remove(bi.ID)
	bm.pending.remove(bi.ID)
	bm.blocksMap.remove(bi.ID)
	bi.file = nil
}

func (bm *BlockManager) setReplication(bi *BlockInfo, oldRepl, newRepl int16) {
	live := bm.countLiveReplicas(bi)
	if int(newRepl) > live {
		bm.neededReplications.update(bi, live, int(newRepl))
		return
	}
	bm.neededReplications.remove(bi.ID)
	if excess := live - int(newRepl); excess > 0 {
		bm.chooseExcessReplicates(bi, excess)
	}
}

// chooseExcessReplicates invalidates replicas on the fullest nodes. The
// replicas stay in the blocks map until the datanodes confirm the deletion.
func (bm *BlockManager) chooseExcessReplicates(bi *BlockInfo, excess int) {
	chosen := make(map[*DatanodeDescriptor]bool, excess)
	for excess > 0 {
		var victim *DatanodeDescriptor
		for _, dn := range bi.storages {
			if !chosen[dn] && (victim == nil || dn.remaining < victim.remaining) {
				victim = dn
			}
		}
		if victim == nil {
			return
		}
		chosen[victim] = true
		victim.addInvalidation(bi.Block)
		bm.ns.log.Printf("BLOCK* chooseExcessReplicates: (%s, %s) is added to invalidated blocks set", victim, bi.Block)
		excess--
	}
}

func (bm *BlockManager) countLiveReplicas(bi *BlockInfo) int {
	live := 0
	for _, dn := range bi.storages {
		if dn.alive && !dn.decommission {
			live++
		}
	}
	return live
}

// addStoredBlock records a finalized replica of b on dn.
func (bm *BlockManager) addStoredBlock(b proto.Block, dn *DatanodeDescriptor) {
	bi := bm.blocksMap.get(b.ID)
	if bi == nil || bi.file == nil {
		// The file was deleted while the replica was being written.
		bm.ns.log.Printf("BLOCK* addStoredBlock: %s on %s size %d but it does not belong to any file", b, dn, b.NumBytes)
		dn.addInvalidation(b)
		return
	}
	if b.GenStamp < bi.GenStamp {
		bm.ns.log.Printf("BLOCK* addStoredBlock: stale replica %s on %s, current genstamp %d", b, dn, bi.GenStamp)
		dn.addInvalidation(b)
		return
	}
	if !bi.addStorage(dn) {
		return
	}
	dn.addBlock(bi)
	bm.pending.decrement(bi.ID)
	live := bm.countLiveReplicas(bi)
	bm.updateNeededReplications(bi, live)
}

// removeStoredBlock forgets the replica of b on dn, e.g. after the datanode
// deleted it, and queues re-replication if the block is now short.
func (bm *BlockManager) removeStoredBlock(b proto.Block, dn *DatanodeDescriptor) {
	bi := bm.blocksMap.get(b.ID)
	if bi == nil {
		return
	}
	if !bi.removeStorage(dn) {
		return
	}
	dn.removeBlock(bi)
	if bi.file != nil {
		bm.updateNeededReplications(bi, bm.countLiveReplicas(bi))
	}
}

func (bm *BlockManager) updateNeededReplications(bi *BlockInfo, live int) {
	expected := bi.expectedReplicas()
	if live+bm.pending.numReplicas(bi.ID) < expected {
		bm.neededReplications.update(bi, live, expected)
	} else {
		bm.neededReplications.remove(bi.ID)
	}
}

// removeBlocksAssociatedTo drops every replica on a dead datanode.
func (bm *BlockManager) removeBlocksAssociatedTo(dn *DatanodeDescriptor) {
	for _, bi := range dn.blocks {
		bi.removeStorage(dn)
		if bi.file != nil {
			bm.updateNeededReplications(bi, bm.countLiveReplicas(bi))
		}
	}
	dn.blocks = make(map[proto.BlockID]*BlockInfo)
}

// processReport reconciles a full block report with what the namenode knows.
func (bm *BlockManager) processReport(dn *DatanodeDescriptor, report []proto.Block) (added, removed int) {
	seen := make(map[proto.BlockID]bool, len(report))
	for _, b := range report {
		seen[b.ID] = true
		if _, ok := dn.blocks[b.ID]; !ok {
			bm.addStoredBlock(b, dn)
			added++
		}
	}
	for id, bi := range dn.blocks {
		if !seen[id] {
			bm.removeStoredBlock(bi.Block, dn)
			removed++
		}
	}
	return added, removed
}
