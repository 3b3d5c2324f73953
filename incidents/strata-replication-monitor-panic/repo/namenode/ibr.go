package namenode

import (
	"github.com/stratafs/strata/proto"
)

// processIncrementalBlockReport applies the RECEIVING and RECEIVED entries
// of an incremental block report. Runs on the block-op goroutine with the
// namesystem write lock held.
func (bm *BlockManager) processIncrementalBlockReport(dn *DatanodeDescriptor, ibr proto.IncrementalBlockReport) {
	received, receiving, deleted := 0, 0, 0
	for _, rdbi := range ibr.Blocks {
		switch rdbi.Status {
		case proto.BlockReceived:
			bm.addStoredBlock(rdbi.Block, dn)
			received++
		case proto.BlockReceiving:
			if bi := bm.blocksMap.get(rdbi.Block.ID); bi == nil {
				bm.ns.log.Printf("BLOCK* processIncrementalBlockReport: %s is receiving %s which does not belong to any file", dn, rdbi.Block)
			}
			receiving++
		case proto.BlockDeleted:
			deleted++
		default:
			bm.ns.log.Printf("BLOCK* processIncrementalBlockReport: unknown status %s for %s from %s", rdbi.Status, rdbi.Block, dn)
		}
	}
	if received+receiving > 0 || deleted > 100 {
		bm.ns.log.Printf("BLOCK* processIncrementalBlockReport: from %s receiving: %d, received: %d, deleted: %d", dn, receiving, received, deleted)
	}
}

// processFullReport reconciles a full report. Runs on the block-op
// goroutine with the namesystem write lock held.
func (bm *BlockManager) processFullReport(dn *DatanodeDescriptor, report proto.BlockReport) {
	added, removed := bm.processReport(dn, report.Blocks)
	bm.ns.log.Printf("BLOCK* processReport: from %s, blocks: %d, added: %d, removed: %d", dn, len(report.Blocks), added, removed)
}
