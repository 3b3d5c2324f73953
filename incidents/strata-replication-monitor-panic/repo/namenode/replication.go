package namenode

import (
	"math/rand"
	"strings"
)

type replicationWork struct {
	block    *BlockInfo
	src      *DatanodeDescriptor
	live     int
	expected int
	targets  []*DatanodeDescriptor
}

// computeReplicationWork picks up to blocksToProcess under-replicated blocks
// and schedules transfers for them. It returns the number of blocks for which
// work was scheduled.
func (bm *BlockManager) computeReplicationWork(blocksToProcess int) int {
	bm.ns.writeLock()
	blocks := bm.neededReplications.chooseBlocks(blocksToProcess)
	bm.ns.writeUnlock()
	return bm.computeReplicationWorkForBlocks(blocks)
}

func (bm *BlockManager) computeReplicationWorkForBlocks(blocks []*BlockInfo) int {
	var work []*replicationWork

	// Phase 1: pick a source for every block, under the lock.
	bm.ns.writeLock()
	for _, bi := range blocks {
		if bi.file == nil {
			bm.neededReplications.remove(bi.ID)
			continue
		}
		src, live := bm.chooseSourceDatanode(bi)
		if src == nil {
			continue
		}
		expected := bi.expectedReplicas()
		if live+bm.pending.numReplicas(bi.ID) >= expected {
			bm.neededReplications.remove(bi.ID)
			continue
		}
		work = append(work, &replicationWork{block: bi, src: src, live: live, expected: expected})
	}
	bm.ns.writeUnlock()

	// Phase 2: choose targets without holding the lock; placement only
	// reads the datanode list.
	live := bm.dm.liveDatanodes()
	for _, w := range work {
		w.targets = bm.chooseTargets(w, live)
	}

	// Phase 3: re-validate and hand the work to the sources.
	scheduled := 0
	bm.ns.writeLock()
	defer bm.ns.writeUnlock()
	for _, w := range work {
		bi := w.block
		if bi.file == nil || bm.blocksMap.get(bi.ID) != bi {
			bm.neededReplications.remove(bi.ID)
			continue
		}
		if len(w.targets) == 0 {
			bm.ns.log.Printf("BLOCK* computeReplicationWork: not able to place enough replicas for %s, still in need of %d", bi.Block, w.expected-w.live)
			continue
		}
		w.src.addTransfer(bi, w.targets)
		bm.pending.increment(bi.ID, len(w.targets))
		if w.live+len(w.targets) >= w.expected {
			bm.neededReplications.remove(bi.ID)
		}
		names := make([]string, len(w.targets))
		for i, t := range w.targets {
			names[i] = t.Addr
		}
		bm.ns.log.Printf("BLOCK* ask %s to replicate %s to datanode(s) %s", w.src, bi.Block, strings.Join(names, " "))
		scheduled++
	}
	return scheduled
}

// chooseSourceDatanode returns the replica holder that should copy bi, and
// the number of live replicas. Nodes that are already busy with
// MaxReplicationStreams transfers are skipped unless the block is down to a
// single replica.
func (bm *BlockManager) chooseSourceDatanode(bi *BlockInfo) (*DatanodeDescriptor, int) {
	var src *DatanodeDescriptor
	live, decommissioning := 0, 0
	n := bi.numNodes()
	for i := 0; i < n; i++ {
		dn := bi.storageAt(i)
		if !dn.alive {
			continue
		}
		if dn.decommission {
			decommissioning++
		} else {
			live++
		}
		busy := dn.pendingTransfers() >= bm.cfg.MaxReplicationStreams
		if busy && n > 1 {
			continue
		}
		// Prefer decommissioning nodes: they serve no client reads.
		if src == nil || (dn.decommission && !src.decommission) || rand.Intn(2) == 0 {
			src = dn
		}
	}
	if live == 0 && decommissioning == 0 {
		return nil, 0
	}
	return src, live
}

// chooseTargets picks datanodes for the missing replicas, preferring a rack
// that does not already hold one.
func (bm *BlockManager) chooseTargets(w *replicationWork, candidates []*DatanodeDescriptor) []*DatanodeDescriptor {
	need := w.expected - w.live
	if need <= 0 {
		return nil
	}
	holders := make(map[*DatanodeDescriptor]bool)
	racks := make(map[string]bool)
	bm.ns.readLock()
	for _, dn := range w.block.storages {
		holders[dn] = true
		racks[dn.Rack] = true
	}
	bm.ns.readUnlock()

	perm := rand.Perm(len(candidates))
	var offRack, onRack []*DatanodeDescriptor
	for _, i := range perm {
		dn := candidates[i]
		if holders[dn] || dn.remaining < w.block.NumBytes*2 {
			continue
		}
		if racks[dn.Rack] {
			onRack = append(onRack, dn)
		} else {
			offRack = append(offRack, dn)
		}
	}
	targets := append(offRack, onRack...)
	if len(targets) > need {
		targets = targets[:need]
	}
	return targets
}
