// Package proto defines the messages exchanged between datanodes and the
// namenode.
package proto

import "fmt"

// BlockID identifies a block cluster-wide.
type BlockID int64

// Block is a block as reported by a datanode.
type Block struct {
	ID       BlockID
	GenStamp int64
	NumBytes int64
}

func (b Block) String() string { return fmt.Sprintf("blk_%d_%d", b.ID, b.GenStamp) }

// DatanodeRegistration identifies a datanode across restarts.
type DatanodeRegistration struct {
	UUID     string
	Addr     string
	Rack     string
	Capacity int64
}

// BlockStatus is the state of a block in an incremental block report.
type BlockStatus int

const (
	BlockReceiving BlockStatus = iota + 1
	BlockReceived
	BlockDeleted
)

func (s BlockStatus) String() string {
	switch s {
	case BlockReceiving:
		return "RECEIVING_BLOCK"
	case BlockReceived:
		return "RECEIVED_BLOCK"
	case BlockDeleted:
		return "DELETED_BLOCK"
	}
	return fmt.Sprintf("BlockStatus(%d)", int(s))
}

// ReceivedDeletedBlock is one entry of an incremental block report.
type ReceivedDeletedBlock struct {
	Block  Block
	Status BlockStatus
}

// IncrementalBlockReport is sent by a datanode after it finished writing,
// started writing or deleted blocks.
type IncrementalBlockReport struct {
	Registration DatanodeRegistration
	Blocks       []ReceivedDeletedBlock
}

// BlockReport is a full listing of a datanode's finalized blocks.
type BlockReport struct {
	Registration DatanodeRegistration
	Blocks       []Block
}

// Heartbeat carries storage utilisation.
type Heartbeat struct {
	Registration  DatanodeRegistration
	Remaining     int64
	Used          int64
	XceiverCount  int
	FailedVolumes int
}

// CommandAction is what a datanode command asks for.
type CommandAction int

const (
	ActionTransfer CommandAction = iota + 1
	ActionInvalidate
)

// DatanodeCommand is returned in a heartbeat response.
type DatanodeCommand struct {
	Action  CommandAction
	Blocks  []Block
	Targets [][]string
}

// HeartbeatResponse returns the commands queued for a datanode.
type HeartbeatResponse struct {
	Commands []DatanodeCommand
}
