package namenode

import (
	"github.com/stratafs/strata/proto"
)

const (
	priorityHighest = iota // a single replica left
	priorityVeryUnder      // fewer than a third of the expected replicas
	priorityUnder          // below the expected count
	numPriorities
)

// underReplicatedBlocks keeps blocks that need more replicas, bucketed by
// urgency. Guarded by the namesystem lock.
type underReplicatedBlocks struct {
	queues  [numPriorities][]*BlockInfo
	index   map[proto.BlockID]int
	cursors [numPriorities]int
}

func newUnderReplicatedBlocks() *underReplicatedBlocks {
	return &underReplicatedBlocks{index: make(map[proto.BlockID]int)}
}

func priorityOf(live, expected int) int {
	switch {
	case live <= 1:
		return priorityHighest
	case live*3 < expected:
		return priorityVeryUnder
	default:
		return priorityUnder
	}
}

func (q *underReplicatedBlocks) size() int { return len(q.index) }

func (q *underReplicatedBlocks) update(bi *BlockInfo, live, expected int) {
	pri := priorityOf(live, expected)
	if old, ok := q.index[bi.ID]; ok {
		if old == pri {
			return
		}
		q.removeFrom(old, bi.ID)
	}
	q.queues[pri] = append(q.queues[pri], bi)
	q.index[bi.ID] = pri
}

func (q *underReplicatedBlocks) remove(id proto.BlockID) {
	if pri, ok := q.index[id]; ok {
		q.removeFrom(pri, id)
		delete(q.index, id)
	}
}

func (q *underReplicatedBlocks) removeFrom(pri int, id proto.BlockID) {
	qs := q.queues[pri]
	for i, bi := range qs {
		if bi.ID == id {
			q.queues[pri] = append(qs[:i], qs[i+1:]...)
			if q.cursors[pri] > i {
				q.cursors[pri]--
			}
			return
		}
	}
}

// chooseBlocks returns up to n blocks, most urgent first, resuming where the
// previous call stopped within each queue.
func (q *underReplicatedBlocks) chooseBlocks(n int) []*BlockInfo {
	out := make([]*BlockInfo, 0, n)
	for pri := 0; pri < numPriorities && len(out) < n; pri++ {
		qs := q.queues[pri]
		if q.cursors[pri] >= len(qs) {
			q.cursors[pri] = 0
		}
		for i := q.cursors[pri]; i < len(qs) && len(out) < n; i++ {
			out = append(out, qs[i])
			q.cursors[pri] = i + 1
		}
	}
	return out
}
