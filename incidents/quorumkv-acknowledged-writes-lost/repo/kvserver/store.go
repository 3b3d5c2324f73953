package kvserver

import (
	"errors"
	"sort"
	"sync"
)

// ErrKeyNotFound is returned by Get when the key has no live value.
var ErrKeyNotFound = errors.New("kvserver: key not found")

// KeyValue is a stored value with its MVCC metadata.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision uint64
	ModRevision    uint64
	Version        int64
}

// store is the in-memory state machine. The store revision is the raft index
// of the last applied entry that modified it.
type store struct {
	mu       sync.RWMutex
	kvs      map[string]*KeyValue
	revision uint64
	applied  uint64
}

func newStore() *store {
	return &store{kvs: make(map[string]*KeyValue)}
}

func (s *store) put(key string, value []byte, rev uint64) *KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	kv, ok := s.kvs[key]
	if !ok {
		kv = &KeyValue{Key: key, CreateRevision: rev}
		s.kvs[key] = kv
	}
	kv.Value = append([]byte(nil), value...)
	kv.ModRevision = rev
	kv.Version++
	s.revision = rev
	return kv
}

func (s *store) del(key string, rev uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.kvs[key]; !ok {
		return false
	}
	delete(s.kvs, key)
	s.revision = rev
	return true
}

func (s *store) get(key string) (KeyValue, uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	kv, ok := s.kvs[key]
	if !ok {
		return KeyValue{}, s.revision, ErrKeyNotFound
	}
	return *kv, s.revision, nil
}

func (s *store) rangePrefix(prefix string, limit int) ([]KeyValue, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []KeyValue
	for k, kv := range s.kvs {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, *kv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, s.revision
}

func (s *store) setApplied(i uint64) {
	s.mu.Lock()
	s.applied = i
	s.mu.Unlock()
}

func (s *store) appliedIndex() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied
}
