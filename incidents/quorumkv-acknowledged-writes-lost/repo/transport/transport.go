// Package transport moves raft messages between members over a simple
// length-prefixed TCP stream, with one outbound queue per peer.
package transport

import (
	"bufio"
	"context"
	"encoding/gob"
	"net"
	"sync"
	"time"

	"github.com/quorumkv/quorumkv/internal/zap"
	"github.com/quorumkv/quorumkv/raft"
)

// Raft is the subset of the raft node the transport delivers to.
type Raft interface {
	Step(ctx context.Context, m raft.Message) error
}

type peer struct {
	id      uint64
	addr    string
	queue   chan raft.Message
	active  bool
	dropped int
}

// Transport owns connections to all peers.
type Transport struct {
	ID     uint64
	Raft   Raft
	Logger *zap.Logger

	mu    sync.Mutex
	peers map[uint64]*peer
	stopc chan struct{}
}

// New creates a transport for member id.
func New(id uint64, r Raft, lg *zap.Logger) *Transport {
	return &Transport{ID: id, Raft: r, Logger: lg.Named("rafthttp"), peers: make(map[uint64]*peer), stopc: make(chan struct{})}
}

// AddPeer registers a remote member and starts its writer.
func (t *Transport) AddPeer(id uint64, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := &peer{id: id, addr: addr, queue: make(chan raft.Message, 4096)}
	t.peers[id] = p
	go t.writeLoop(p)
	t.Logger.Info("added remote peer", zap.Uint64("local-member-id", t.ID), zap.Uint64("remote-peer-id", id), zap.String("remote-peer-url", addr))
}

// Send queues messages for delivery; messages to unknown or congested peers
// are dropped, which raft tolerates.
func (t *Transport) Send(msgs []raft.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		p, ok := t.peers[m.To]
		if !ok {
			continue
		}
		select {
		case p.queue <- m:
		default:
			p.dropped++
			if p.dropped%100 == 1 {
				t.Logger.Warn("dropped internal raft message since sending buffer is full",
					zap.String("message-type", m.Type.String()), zap.Uint64("remote-peer-id", m.To), zap.Int("dropped", p.dropped))
			}
		}
	}
}

func (t *Transport) writeLoop(p *peer) {
	var conn net.Conn
	var enc *gob.Encoder
	var w *bufio.Writer
	for {
		select {
		case <-t.stopc:
			return
		case m := <-p.queue:
			if conn == nil {
				c, err := net.DialTimeout("tcp", p.addr, time.Second)
				if err != nil {
					if p.active {
						p.active = false
						t.Logger.Warn("peer became inactive (message send to peer failed)",
							zap.Uint64("remote-peer-id", p.id), zap.Error(err))
					}
					continue
				}
				conn, w = c, bufio.NewWriter(c)
				enc = gob.NewEncoder(w)
				if !p.active {
					p.active = true
					t.Logger.Info("peer became active", zap.Uint64("remote-peer-id", p.id))
				}
			}
			if err := enc.Encode(&m); err == nil {
				err = w.Flush()
			} else {
				conn.Close()
				conn = nil
			}
		}
	}
}

// Serve accepts inbound peer connections and steps received messages.
func (t *Transport) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go t.readLoop(c)
	}
}

func (t *Transport) readLoop(c net.Conn) {
	defer c.Close()
	dec := gob.NewDecoder(bufio.NewReader(c))
	for {
		var m raft.Message
		if err := dec.Decode(&m); err != nil {
			t.Logger.Debug("lost peer stream", zap.String("remote", c.RemoteAddr().String()), zap.Error(err))
			return
		}
		if err := t.Raft.Step(context.Background(), m); err != nil {
			t.Logger.Warn("failed to process raft message", zap.Error(err))
		}
	}
}

// Stop closes all peer writers.
func (t *Transport) Stop() { close(t.stopc) }
