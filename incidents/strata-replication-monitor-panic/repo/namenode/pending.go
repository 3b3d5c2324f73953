package namenode

import (
	"sync"
	"time"

	"github.com/stratafs/strata/proto"
)

type pendingBlock struct {
	replicas  int
	scheduled time.Time
}

// pendingReplications tracks transfers that were handed to datanodes but not
// yet confirmed by an incremental block report.
type pendingReplications struct {
	mu      sync.Mutex
	timeout time.Duration
	blocks  map[proto.BlockID]*pendingBlock
}

func newPendingReplications(timeout time.Duration) *pendingReplications {
	return &pendingReplications{timeout: timeout, blocks: make(map[proto.BlockID]*pendingBlock)}
}

func (p *pendingReplications) increment(id proto.BlockID, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pb, ok := p.blocks[id]
	if !ok {
		pb = &pendingBlock{}
		p.blocks[id] = pb
	}
	pb.replicas += n
	pb.scheduled = time.Now()
}

func (p *pendingReplications) decrement(id proto.BlockID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pb, ok := p.blocks[id]; ok {
		pb.replicas--
		if pb.replicas <= 0 {
			delete(p.blocks, id)
		}
	}
}

func (p *pendingReplications) remove(id proto.BlockID) {
	p.mu.Lock()
	delete(p.blocks, id)
	p.mu.Unlock()
}

func (p *pendingReplications) numReplicas(id proto.BlockID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pb, ok := p.blocks[id]; ok {
		return pb.replicas
	}
	return 0
}

// timedOut removes and returns the blocks whose transfers did not complete
// in time.
func (p *pendingReplications) timedOut() []proto.BlockID {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proto.BlockID
	cutoff := time.Now().Add(-p.timeout)
	for id, pb := range p.blocks {
		if pb.scheduled.Before(cutoff) {
			out = append(out, id)
			delete(p.blocks, id)
		}
	}
	return out
}
