package raft

import (
	"github.com/quorumkv/quorumkv/internal/zap"
)

// raftLog holds the replicated log of a single member. entries[0] is a
// sentinel describing the last compacted entry (index and term only).
type raftLog struct {
	entries []Entry

	// committed is the highest index known to be stored on a quorum.
	committed uint64
	// applied is the highest index handed to the state machine.
	applied uint64

	logger *zap.Logger
}

func newLog(logger *zap.Logger) *raftLog {
	return &raftLog{entries: []Entry{{Index: 0, Term: 0}}, logger: logger}
}

func (l *raftLog) offset() uint64     { return l.entries[0].Index }
func (l *raftLog) firstIndex() uint64 { return l.offset() + 1 }
func (l *raftLog) lastIndex() uint64  { return l.entries[len(l.entries)-1].Index }
func (l *raftLog) lastTerm() uint64   { return l.entries[len(l.entries)-1].Term }

// term returns the term of the entry at index i, if it is still in the log.
func (l *raftLog) term(i uint64) (uint64, bool) {
	if i < l.offset() || i > l.lastIndex() {
		return 0, false
	}
	return l.entries[i-l.offset()].Term, true
}

func (l *raftLog) matchTerm(i, t uint64) bool {
	tt, ok := l.term(i)
	return ok && tt == t
}

// isUpToDate reports whether a log whose last entry is (lasti, term) is at
// least as up-to-date as this log (Raft §5.4.1).
func (l *raftLog) isUpToDate(lasti, term uint64) bool {
	return term > l.lastTerm() || (term == l.lastTerm() && lasti >= l.lastIndex())
}

// append adds entries to the end of the log, truncating any suffix that
// starts at or after the first new entry.
func (l *raftLog) append(ents ...Entry) uint64 {
	if len(ents) == 0 {
		return l.lastIndex()
	}
	after := ents[0].Index - 1
	if after < l.committed {
		l.logger.Panic("entries would overwrite committed log",
			zap.Uint64("after", after), zap.Uint64("committed", l.committed))
	}
	if after < l.lastIndex() {
		l.logger.Info("truncating log suffix",
			zap.Uint64("from-index", after+1), zap.Uint64("last-index", l.lastIndex()))
	}
	l.entries = append(l.entries[:after-l.offset()+1], ents...)
	return l.lastIndex()
}

// findConflict returns the index of the first entry in ents whose term does
// not match the local log, the index of the first new entry when every
// overlapping entry matches, or 0 when ents is entirely contained.
func (l *raftLog) findConflict(ents []Entry) uint64 {
	for _, ne := range ents {
		if !l.matchTerm(ne.Index, ne.Term) {
			if ne.Index <= l.lastIndex() {
				existing, _ := l.term(ne.Index)
				l.logger.Info("found conflict at index",
					zap.Uint64("index", ne.Index),
					zap.Uint64("existing-term", existing),
					zap.Uint64("conflicting-term", ne.Term))
			}
			return ne.Index
		}
	}
	return 0
}

// maybeAppend appends ents after (index, logTerm) if the log contains that
// entry, and advances the commit index. It returns the last index of the new
// entries and whether the append was accepted.
func (l *raftLog) maybeAppend(index, logTerm, committed uint64, ents []Entry) (uint64, bool) {
	if !l.matchTerm(index, logTerm) {
		return 0, false
	}
	lastnewi := index + uint64(len(ents))
	ci := l.findConflict(ents)
	switch {
	case ci == 0:
	case ci <= l.committed:
		l.logger.Panic("entry conflicts with committed entry",
			zap.Uint64("conflict-index", ci), zap.Uint64("committed", l.committed))
	default:
		l.append(ents[ci-(index+1):]...)
	}
	l.commitTo(min(committed, lastnewi))
	return lastnewi, true
}

func (l *raftLog) commitTo(tocommit uint64) {
	if tocommit <= l.committed {
		return
	}
	if tocommit > l.lastIndex() {
		l.logger.Panic("commit index out of range",
			zap.Uint64("to-commit", tocommit), zap.Uint64("last-index", l.lastIndex()))
	}
	l.committed = tocommit
}

func (l *raftLog) maybeCommit(maxIndex, term uint64) bool {
	if maxIndex > l.committed && l.matchTerm(maxIndex, term) {
		l.commitTo(maxIndex)
		return true
	}
	return false
}

// slice returns entries in [lo, hi).
func (l *raftLog) slice(lo, hi uint64) []Entry {
	if lo < l.firstIndex() || hi > l.lastIndex()+1 || lo > hi {
		return nil
	}
	out := make([]Entry, hi-lo)
	copy(out, l.entries[lo-l.offset():hi-l.offset()])
	return out
}

// nextCommitted returns the entries that are committed but not yet applied,
// and marks them as applied.
func (l *raftLog) nextCommitted() []Entry {
	if l.committed <= l.applied {
		return nil
	}
	ents := l.slice(l.applied+1, l.committed+1)
	l.applied = l.committed
	return ents
}

// restore replaces the log with entries recovered from the WAL. The commit
// index is volatile and starts at the compaction point.
func (l *raftLog) restore(ents []Entry) {
	l.entries = append([]Entry{{Index: 0, Term: 0}}, ents...)
	l.committed = 0
	l.applied = 0
}

func min(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}
