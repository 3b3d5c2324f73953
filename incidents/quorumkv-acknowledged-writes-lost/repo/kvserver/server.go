package kvserver

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"time"

	"github.com/quorumkv/quorumkv/internal/zap"
	"github.com/quorumkv/quorumkv/raft"
	"github.com/quorumkv/quorumkv/transport"
)

var (
	ErrNotLeader = errors.New("kvserver: not leader")
	ErrTimeout   = errors.New("kvserver: request timed out")
	ErrStopped   = errors.New("kvserver: server stopped")
)

// Config configures a server.
type Config struct {
	ID             uint64
	Peers          map[uint64]string
	TickInterval   time.Duration
	ElectionTicks  int
	RequestTimeout time.Duration
	WALDir         string
	Logger         *zap.Logger
}

// Server is one member of the cluster: raft node, transport, WAL and store.
type Server struct {
	cfg   Config
	lg    *zap.Logger
	node  *raft.Node
	tr    *transport.Transport
	wal   *wal
	store *store

	mu      sync.Mutex
	waits   map[uint64]chan result
	lead    uint64
	term    uint64
	stopc   chan struct{}
	applyWG sync.WaitGroup
}

// NewServer recovers from the WAL and starts the member.
func NewServer(cfg Config) (*Server, error) {
	lg := cfg.Logger
	w, err := openWAL(cfg.WALDir, lg)
	if err != nil {
		return nil, err
	}
	hs, ents, err := w.readAll()
	if err != nil {
		return nil, err
	}
	if len(ents) > 0 {
		lg.Info("restarting local member", zap.Uint64("local-member-id", cfg.ID),
			zap.Uint64("term", hs.Term), zap.Uint64("vote", hs.Vote), zap.Int("wal-entries", len(ents)),
			zap.Uint64("last-index", ents[len(ents)-1].Index))
	} else {
		lg.Info("starting local member", zap.Uint64("local-member-id", cfg.ID))
	}
	peers := make([]uint64, 0, len(cfg.Peers))
	for id := range cfg.Peers {
		peers = append(peers, id)
	}
	s := &Server{
		cfg:   cfg,
		lg:    lg,
		wal:   w,
		store: newStore(),
		waits: make(map[uint64]chan result),
		stopc: make(chan struct{}),
	}
	s.node = raft.StartNode(&raft.Config{
		ID:             cfg.ID,
		Peers:          peers,
		ElectionTicks:  cfg.ElectionTicks,
		HeartbeatTicks: 1,
		Logger:         lg.Named("raft"),
	}, hs, ents)
	s.tr = transport.New(cfg.ID, s.node, lg)
	for id, addr := range cfg.Peers {
		if id != cfg.ID {
			s.tr.AddPeer(id, addr)
		}
	}
	go s.tickLoop()
	go s.readyLoop()
	return s, nil
}

func (s *Server) tickLoop() {
	t := time.NewTicker(s.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.node.Tick()
		case <-s.stopc:
			return
		}
	}
}

func (s *Server) readyLoop() {
	for {
		select {
		case <-s.stopc:
			return
		case rd := <-s.node.Ready():
			s.mu.Lock()
			if rd.Lead != s.lead || rd.HardState.Term != s.term {
				if rd.Lead != s.lead {
					s.lg.Info("leader changed", zap.Uint64("local-member-id", s.cfg.ID),
						zap.Uint64("old-leader", s.lead), zap.Uint64("new-leader", rd.Lead), zap.Uint64("term", rd.HardState.Term))
				}
				s.lead, s.term = rd.Lead, rd.HardState.Term
			}
			s.mu.Unlock()
			if err := s.wal.save(rd.HardState, rd.Messages); err != nil {
				s.lg.Panic("failed to save hard state", zap.Error(err))
			}
			s.tr.Send(rd.Messages)
			if len(rd.CommittedEntries) > 0 {
				s.apply(rd.CommittedEntries)
			}
		}
	}
}

func (s *Server) apply(ents []raft.Entry) {
	start := time.Now()
	for _, e := range ents {
		req, err := unmarshalRequest(e.Data)
		if err != nil {
			s.lg.Warn("skipping malformed entry", zap.Uint64("index", e.Index), zap.Error(err))
			continue
		}
		var res result
		switch req.Op {
		case opPut:
			kv := s.store.put(req.Key, req.Value, e.Index)
			res.Revision = kv.ModRevision
		case opDelete:
			res.Deleted = s.store.del(req.Key, e.Index)
			res.Revision = e.Index
		case opNoop:
			res.Revision = e.Index
		}
		s.store.setApplied(e.Index)
		s.trigger(req.ID, res)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		s.lg.Warn("apply request took too long", zap.Duration("took", took),
			zap.Int("entries", len(ents)), zap.Uint64("last-index", ents[len(ents)-1].Index))
	}
}

func (s *Server) trigger(id uint64, res result) {
	if id == 0 {
		return
	}
	s.mu.Lock()
	ch, ok := s.waits[id]
	delete(s.waits, id)
	s.mu.Unlock()
	if ok {
		ch <- res
	}
}

func (s *Server) propose(ctx context.Context, req *request) (result, error) {
	s.mu.Lock()
	if s.lead != s.cfg.ID {
		s.mu.Unlock()
		return result{}, ErrNotLeader
	}
	req.ID = rand.Uint64() | 1
	ch := make(chan result, 1)
	s.waits[req.ID] = ch
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := s.node.Propose(ctx, req.marshal()); err != nil {
		return result{}, err
	}
	select {
	case res := <-ch:
		return res, res.Err
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waits, req.ID)
		s.mu.Unlock()
		s.lg.Warn("request timed out", zap.String("op", string(req.Op)), zap.String("key", req.Key),
			zap.Duration("timeout", s.cfg.RequestTimeout))
		return result{}, ErrTimeout
	case <-s.stopc:
		return result{}, ErrStopped
	}
}

// Put stores value under key and returns the revision it was written at.
func (s *Server) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	res, err := s.propose(ctx, &request{Op: opPut, Key: key, Value: value})
	return res.Revision, err
}

// Delete removes key.
func (s *Server) Delete(ctx context.Context, key string) (bool, uint64, error) {
	res, err := s.propose(ctx, &request{Op: opDelete, Key: key})
	return res.Deleted, res.Revision, err
}

// Get performs a linearizable read: a no-op is committed through the log
// first so that the local store reflects every write acknowledged before
// the read started.
func (s *Server) Get(ctx context.Context, key string) (KeyValue, uint64, error) {
	if _, err := s.propose(ctx, &request{Op: opNoop}); err != nil {
		return KeyValue{}, 0, err
	}
	return s.store.get(key)
}

// Range returns keys with the given prefix.
func (s *Server) Range(ctx context.Context, prefix string, limit int) ([]KeyValue, uint64, error) {
	if _, err := s.propose(ctx, &request{Op: opNoop}); err != nil {
		return nil, 0, err
	}
	kvs, rev := s.store.rangePrefix(prefix, limit)
	return kvs, rev, nil
}

// Leader returns the member's view of the current leader.
func (s *Server) Leader() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lead
}

// Transport exposes the peer transport for the listener.
func (s *Server) Transport() *transport.Transport { return s.tr }

// Stop shuts the member down.
func (s *Server) Stop() {
	close(s.stopc)
	s.node.Stop()
	s.tr.Stop()
	s.wal.close()
}
