package raft

import "fmt"

// None is a placeholder node ID used when there is no leader or vote.
const None uint64 = 0

type StateType int

const (
	StateFollower StateType = iota
	StateCandidate
	StateLeader
)

func (s StateType) String() string {
	switch s {
	case StateFollower:
		return "StateFollower"
	case StateCandidate:
		return "StateCandidate"
	case StateLeader:
		return "StateLeader"
	}
	return fmt.Sprintf("StateType(%d)", int(s))
}

type MessageType int

const (
	MsgHup MessageType = iota
	MsgProp
	MsgVote
	MsgVoteResp
	MsgApp
	MsgAppResp
	MsgHeartbeat
	MsgHeartbeatResp
)

var msgNames = [...]string{"MsgHup", "MsgProp", "MsgVote", "MsgVoteResp", "MsgApp", "MsgAppResp", "MsgHeartbeat", "MsgHeartbeatResp"}

func (t MessageType) String() string {
	if int(t) < len(msgNames) {
		return msgNames[t]
	}
	return fmt.Sprintf("MessageType(%d)", int(t))
}

// Entry is a single replicated log entry.
type Entry struct {
	Term  uint64
	Index uint64
	Data  []byte
}

// Message is the unit exchanged between raft peers.
//
// For MsgVote, Index and LogTerm describe the candidate's last log entry.
// For MsgApp, Index and LogTerm describe the entry immediately preceding
// Entries.
type Message struct {
	Type       MessageType
	From       uint64
	To         uint64
	Term       uint64
	LogTerm    uint64
	Index      uint64
	Entries    []Entry
	Commit     uint64
	Reject     bool
	RejectHint uint64
}

// HardState is the state that must be persisted before messages are sent.
type HardState struct {
	Term uint64
	Vote uint64
}

// Ready bundles everything the application must handle after a step.
type Ready struct {
	HardState        HardState
	Messages         []Message
	CommittedEntries []Entry
	Lead             uint64
	State            StateType
}
