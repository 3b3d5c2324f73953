package raft

import (
	"math/rand"
	"sort"

	"github.com/quorumkv/quorumkv/internal/zap"
)

// Config configures a raft member.
type Config struct {
	ID               uint64
	Peers            []uint64
	ElectionTicks    int
	HeartbeatTicks   int
	MaxInflightBytes int
	Logger           *zap.Logger
}

type progress struct {
	match uint64
	next  uint64
}

// raft is the consensus state machine of one member. It is not safe for
// concurrent use; Node serialises access to it.
type raft struct {
	id    uint64
	Term  uint64
	vote  uint64
	lead  uint64
	state StateType

	raftLog *raftLog
	prs     map[uint64]*progress
	votes   map[uint64]bool
	msgs    []Message

	electionElapsed           int
	heartbeatElapsed          int
	electionTimeout           int
	heartbeatTimeout          int
	randomizedElectionTimeout int

	logger *zap.Logger
}

func newRaft(c *Config) *raft {
	r := &raft{
		id:               c.ID,
		raftLog:          newLog(c.Logger.Named("log")),
		prs:              make(map[uint64]*progress),
		electionTimeout:  c.ElectionTicks,
		heartbeatTimeout: c.HeartbeatTicks,
		logger:           c.Logger,
	}
	for _, p := range c.Peers {
		r.prs[p] = &progress{next: 1}
	}
	r.becomeFollower(r.Term, None)
	return r
}

func (r *raft) quorum() int { return len(r.prs)/2 + 1 }

func (r *raft) send(m Message) {
	m.From = r.id
	if m.Type != MsgProp {
		m.Term = r.Term
	}
	r.msgs = append(r.msgs, m)
}

func (r *raft) reset(term uint64) {
	if r.Term != term {
		r.Term = term
		r.vote = None
	}
	r.lead = None
	r.electionElapsed = 0
	r.heartbeatElapsed = 0
	r.randomizedElectionTimeout = r.electionTimeout + rand.Intn(r.electionTimeout)
	r.votes = make(map[uint64]bool)
	for id, pr := range r.prs {
		*pr = progress{next: r.raftLog.lastIndex() + 1}
		if id == r.id {
			pr.match = r.raftLog.lastIndex()
		}
	}
}

func (r *raft) becomeFollower(term, lead uint64) {
	r.reset(term)
	r.lead = lead
	r.state = StateFollower
	r.logger.Info("became follower", zap.Uint64("id", r.id), zap.Uint64("term", r.Term), zap.Uint64("leader", lead))
}

func (r *raft) becomeCandidate() {
	r.reset(r.Term + 1)
	r.vote = r.id
	r.state = StateCandidate
	r.logger.Info("became candidate", zap.Uint64("id", r.id), zap.Uint64("term", r.Term))
}

func (r *raft) becomeLeader() {
	r.reset(r.Term)
	r.lead = r.id
	r.state = StateLeader
	// An empty entry from the new term lets the leader commit entries from
	// earlier terms (Raft §5.4.2).
	r.appendEntry(Entry{Data: nil})
	r.logger.Info("became leader", zap.Uint64("id", r.id), zap.Uint64("term", r.Term),
		zap.Uint64("last-index", r.raftLog.lastIndex()))
}

func (r *raft) appendEntry(es ...Entry) {
	li := r.raftLog.lastIndex()
	for i := range es {
		es[i].Term = r.Term
		es[i].Index = li + 1 + uint64(i)
	}
	r.raftLog.append(es...)
	r.prs[r.id].match = r.raftLog.lastIndex()
	r.prs[r.id].next = r.raftLog.lastIndex() + 1
	r.maybeCommit()
}

func (r *raft) tick() {
	switch r.state {
	case StateLeader:
		r.heartbeatElapsed++
		if r.heartbeatElapsed >= r.heartbeatTimeout {
			r.heartbeatElapsed = 0
			r.bcastHeartbeat()
		}
	default:
		r.electionElapsed++
		if r.electionElapsed >= r.randomizedElectionTimeout {
			r.electionElapsed = 0
			r.Step(Message{Type: MsgHup, From: r.id})
		}
	}
}

func (r *raft) campaign() {
	r.becomeCandidate()
	r.votes[r.id] = true
	if len(r.votes) >= r.quorum() {
		r.becomeLeader()
		return
	}
	for id := range r.prs {
		if id == r.id {
			continue
		}
		r.logger.Info("sent vote request", zap.Uint64("id", r.id), zap.Uint64("to", id),
			zap.Uint64("term", r.Term), zap.Uint64("last-term", r.raftLog.lastTerm()),
			zap.Uint64("last-index", r.raftLog.lastIndex()))
		r.send(Message{Type: MsgVote, To: id, Index: r.raftLog.lastIndex(), LogTerm: r.raftLog.lastTerm()})
	}
}

// Step advances the state machine with one message.
func (r *raft) Step(m Message) {
	switch {
	case m.Term == 0:
		// local message
	case m.Term > r.Term:
		if m.Type == MsgApp || m.Type == MsgHeartbeat {
			r.becomeFollower(m.Term, m.From)
		} else {
			r.logger.Info("received message with higher term", zap.Uint64("id", r.id),
				zap.String("type", m.Type.String()), zap.Uint64("from", m.From),
				zap.Uint64("message-term", m.Term), zap.Uint64("term", r.Term))
			r.becomeFollower(m.Term, None)
		}
	case m.Term < r.Term:
		if m.Type == MsgApp || m.Type == MsgHeartbeat {
			// Tell a stale leader about the new term.
			r.send(Message{Type: MsgAppResp, To: m.From})
		}
		return
	}

	switch m.Type {
	case MsgHup:
		if r.state == StateLeader {
			return
		}
		r.campaign()
	case MsgVote:
		r.handleVote(m)
	default:
		switch r.state {
		case StateLeader:
			r.stepLeader(m)
		case StateCandidate:
			r.stepCandidate(m)
		case StateFollower:
			r.stepFollower(m)
		}
	}
}

func (r *raft) handleVote(m Message) {
	lastTerm, lastIndex := r.raftLog.lastTerm(), r.raftLog.lastIndex()
	canVote := r.vote == m.From || (r.vote == None && r.lead == None)
	if canVote && r.raftLog.isUpToDate(m.Index, m.Term) {
		r.logger.Info("cast vote", zap.Uint64("id", r.id), zap.Uint64("candidate", m.From),
			zap.Uint64("candidate-last-term", m.LogTerm), zap.Uint64("candidate-last-index", m.Index),
			zap.Uint64("last-term", lastTerm), zap.Uint64("last-index", lastIndex), zap.Uint64("term", r.Term))
		r.vote = m.From
		r.electionElapsed = 0
		r.send(Message{Type: MsgVoteResp, To: m.From})
		return
	}
	r.logger.Info("rejected vote", zap.Uint64("id", r.id), zap.Uint64("candidate", m.From),
		zap.Uint64("candidate-last-term", m.LogTerm), zap.Uint64("candidate-last-index", m.Index),
		zap.Uint64("last-term", lastTerm), zap.Uint64("last-index", lastIndex),
		zap.Uint64("voted-for", r.vote), zap.Uint64("term", r.Term))
	r.send(Message{Type: MsgVoteResp, To: m.From, Reject: true})
}

func (r *raft) stepCandidate(m Message) {
	switch m.Type {
	case MsgProp:
		r.logger.Debug("dropping proposal, no leader", zap.Uint64("id", r.id))
	case MsgApp, MsgHeartbeat:
		r.becomeFollower(m.Term, m.From)
		r.stepFollower(m)
	case MsgVoteResp:
		r.votes[m.From] = !m.Reject
		granted := 0
		for _, v := range r.votes {
			if v {
				granted++
			}
		}
		r.logger.Info("received vote response", zap.Uint64("id", r.id), zap.Uint64("from", m.From),
			zap.Bool("rejected", m.Reject), zap.Int("granted", granted), zap.Int("quorum", r.quorum()))
		switch {
		case granted >= r.quorum():
			r.becomeLeader()
			r.bcastAppend()
		case len(r.votes)-granted >= r.quorum():
			r.becomeFollower(r.Term, None)
		}
	}
}

func (r *raft) stepFollower(m Message) {
	switch m.Type {
	case MsgProp:
		if r.lead == None {
			r.logger.Debug("dropping proposal, no leader", zap.Uint64("id", r.id))
			return
		}
		m.To = r.lead
		r.send(m)
	case MsgApp:
		r.electionElapsed = 0
		r.lead = m.From
		r.handleAppend(m)
	case MsgHeartbeat:
		r.electionElapsed = 0
		r.lead = m.From
		r.raftLog.commitTo(min(m.Commit, r.raftLog.lastIndex()))
		r.send(Message{Type: MsgHeartbeatResp, To: m.From})
	}
}

func (r *raft) handleAppend(m Message) {
	if m.Index < r.raftLog.committed {
		r.send(Message{Type: MsgAppResp, To: m.From, Index: r.raftLog.committed})
		return
	}
	if last, ok := r.raftLog.maybeAppend(m.Index, m.LogTerm, m.Commit, m.Entries); ok {
		r.send(Message{Type: MsgAppResp, To: m.From, Index: last})
		return
	}
	r.logger.Debug("rejected append", zap.Uint64("id", r.id), zap.Uint64("index", m.Index),
		zap.Uint64("log-term", m.LogTerm), zap.Uint64("last-index", r.raftLog.lastIndex()))
	r.send(Message{Type: MsgAppResp, To: m.From, Index: m.Index, Reject: true, RejectHint: r.raftLog.lastIndex()})
}

func (r *raft) stepLeader(m Message) {
	switch m.Type {
	case MsgProp:
		r.appendEntry(m.Entries...)
		r.bcastAppend()
	case MsgAppResp:
		pr := r.prs[m.From]
		if pr == nil {
			return
		}
		if m.Reject {
			pr.next = min(m.Index, m.RejectHint+1)
			if pr.next < 1 {
				pr.next = 1
			}
			r.sendAppend(m.From)
			return
		}
		if m.Index > pr.match {
			pr.match = m.Index
			pr.next = m.Index + 1
			if r.maybeCommit() {
				r.bcastAppend()
			}
		}
	case MsgHeartbeatResp:
		if pr := r.prs[m.From]; pr != nil && pr.match < r.raftLog.lastIndex() {
			r.sendAppend(m.From)
		}
	}
}

func (r *raft) maybeCommit() bool {
	matches := make([]uint64, 0, len(r.prs))
	for _, pr := range r.prs {
		matches = append(matches, pr.match)
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i] > matches[j] })
	mci := matches[r.quorum()-1]
	return r.raftLog.maybeCommit(mci, r.Term)
}

func (r *raft) sendAppend(to uint64) {
	pr := r.prs[to]
	prevIndex := pr.next - 1
	prevTerm, ok := r.raftLog.term(prevIndex)
	if !ok {
		r.logger.Warn("peer needs entries that were compacted", zap.Uint64("peer", to), zap.Uint64("next", pr.next))
		return
	}
	ents := r.raftLog.slice(pr.next, r.raftLog.lastIndex()+1)
	r.send(Message{Type: MsgApp, To: to, Index: prevIndex, LogTerm: prevTerm, Entries: ents, Commit: r.raftLog.committed})
}

func (r *raft) bcastAppend() {
	for id := range r.prs {
		if id != r.id {
			r.sendAppend(id)
		}
	}
}

func (r *raft) bcastHeartbeat() {
	for id, pr := range r.prs {
		if id == r.id {
			continue
		}
		r.send(Message{Type: MsgHeartbeat, To: id, Commit: min(pr.match, r.raftLog.committed)})
	}
}

func (r *raft) readMessages() []Message {
	msgs := r.msgs
	r.msgs = nil
	return msgs
}
