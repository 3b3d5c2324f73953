package namenode

import "github.com/stratafs/strata/proto"

// BlockInfo is the namenode's record of a block: the file it belongs to and
// the datanodes that hold a finalized replica. Guarded by the namesystem lock.
type BlockInfo struct {
	proto.Block
	file     *INodeFile
	storages []*DatanodeDescriptor
}

func (bi *BlockInfo) expectedReplicas() int {
	if bi.file == nil {
		return 0
	}
	return int(bi.file.Replication)
}

func (bi *BlockInfo) findStorage(dn *DatanodeDescriptor) int {
	for i, s := range bi.storages {
		if s == dn {
			return i
		}
	}
	return -1
}

// addStorage records a replica on dn. It returns false if already known.
func (bi *BlockInfo) addStorage(dn *DatanodeDescriptor) bool {
	if bi.findStorage(dn) >= 0 {
		return false
	}
	bi.storages = append(bi.storages, dn)
	return true
}

// removeStorage forgets the replica on dn. Order of storages is not kept.
func (bi *BlockInfo) removeStorage(dn *DatanodeDescriptor) bool {
	i := bi.findStorage(dn)
	if i < 0 {
		return false
	}
	last := len(bi.storages) - 1
	bi.storages[i] = bi.storages[last]
	bi.storages[last] = nil
	bi.storages = bi.storages[:last]
	return true
}

func (bi *BlockInfo) numNodes() int { return len(bi.storages) }

func (bi *BlockInfo) storageAt(i int) *DatanodeDescriptor { return bi.storages[i] }

// BlocksMap maps block IDs to their BlockInfo. Guarded by the namesystem lock.
type BlocksMap struct {
	blocks map[proto.BlockID]*BlockInfo
}

func newBlocksMap() *BlocksMap {
	return &BlocksMap{blocks: make(map[proto.BlockID]*BlockInfo)}
}

func (m *BlocksMap) get(id proto.BlockID) *BlockInfo { return m.blocks[id] }

func (m *BlocksMap) add(bi *BlockInfo) { m.blocks[bi.ID] = bi }

func (m *BlocksMap) remove(id proto.BlockID) *BlockInfo {
	bi := m.blocks[id]
	if bi != nil {
		delete(m.blocks, id)
		for _, dn := range bi.storages {
			dn.removeBlock(bi)
		}
		bi.storages = nil
	}
	return bi
}

func (m *BlocksMap) size() int { return len(m.blocks) }
