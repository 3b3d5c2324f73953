package raft

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is returned by methods of a stopped Node.
var ErrStopped = errors.New("raft: node stopped")

// Node is the thread-safe handle the server uses to drive a raft member.
type Node struct {
	mu      sync.Mutex
	r       *raft
	readyc  chan Ready
	notify  chan struct{}
	stopc   chan struct{}
	stopped bool
	prevHS  HardState
}

// StartNode creates a member, optionally restoring entries recovered from the
// write-ahead log, and starts its event loop.
func StartNode(c *Config, hs HardState, ents []Entry) *Node {
	r := newRaft(c)
	if len(ents) > 0 {
		r.raftLog.restore(ents)
		r.Term = hs.Term
		r.vote = hs.Vote
		r.reset(r.Term)
		r.vote = hs.Vote
	}
	n := &Node{
		r:      r,
		readyc: make(chan Ready, 1),
		notify: make(chan struct{}, 1),
		stopc:  make(chan struct{}),
		prevHS: hs,
	}
	go n.run()
	return n
}

func (n *Node) run() {
	for {
		select {
		case <-n.stopc:
			return
		case <-n.notify:
		}
		n.mu.Lock()
		rd := n.readyLocked()
		n.mu.Unlock()
		if rd == nil {
			continue
		}
		select {
		case n.readyc <- *rd:
		case <-n.stopc:
			return
		}
	}
}

func (n *Node) readyLocked() *Ready {
	rd := Ready{
		HardState:        HardState{Term: n.r.Term, Vote: n.r.vote},
		Messages:         n.r.readMessages(),
		CommittedEntries: n.r.raftLog.nextCommitted(),
		Lead:             n.r.lead,
		State:            n.r.state,
	}
	if len(rd.Messages) == 0 && len(rd.CommittedEntries) == 0 && rd.HardState == n.prevHS {
		return nil
	}
	n.prevHS = rd.HardState
	return &rd
}

func (n *Node) kick() {
	select {
	case n.notify <- struct{}{}:
	default:
	}
}

// Tick advances the logical clock by one tick.
func (n *Node) Tick() {
	n.mu.Lock()
	n.r.tick()
	n.mu.Unlock()
	n.kick()
}

// Step delivers a message received from a peer.
func (n *Node) Step(ctx context.Context, m Message) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return ErrStopped
	}
	n.r.Step(m)
	n.kick()
	return ctx.Err()
}

// Propose submits data to be appended to the log.
func (n *Node) Propose(ctx context.Context, data []byte) error {
	return n.Step(ctx, Message{Type: MsgProp, Entries: []Entry{{Data: data}}})
}

// Status returns the member's current view.
func (n *Node) Status() (id, term, lead uint64, state StateType, lastIndex, committed uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.r.id, n.r.Term, n.r.lead, n.r.state, n.r.raftLog.lastIndex(), n.r.raftLog.committed
}

// Ready returns the channel on which the application receives work.
func (n *Node) Ready() <-chan Ready { return n.readyc }

// Stop halts the event loop.
func (n *Node) Stop() {
	n.mu.Lock()
	if !n.stopped {
		n.stopped = true
		close(n.stopc)
	}
	n.mu.Unlock()
}
