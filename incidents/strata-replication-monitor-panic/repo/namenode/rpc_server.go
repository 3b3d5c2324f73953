package namenode

import (
	"fmt"

	"github.com/stratafs/strata/proto"
)

// DatanodeProtocolServer implements the RPCs datanodes call on the namenode.
type DatanodeProtocolServer struct {
	ns *Namesystem
}

// NewDatanodeProtocolServer wires the RPC handlers to a namesystem.
func NewDatanodeProtocolServer(ns *Namesystem) *DatanodeProtocolServer {
	return &DatanodeProtocolServer{ns: ns}
}

// RegisterDatanode is called once when a datanode starts.
func (s *DatanodeProtocolServer) RegisterDatanode(reg proto.DatanodeRegistration) error {
	if reg.UUID == "" {
		return fmt.Errorf("registration from %s has no storage id", reg.Addr)
	}
	s.ns.dm.register(reg)
	return nil
}

// SendHeartbeat records liveness and returns pending commands.
func (s *DatanodeProtocolServer) SendHeartbeat(hb proto.Heartbeat) (*proto.HeartbeatResponse, error) {
	dn, err := s.ns.dm.getDatanode(hb.Registration)
	if err != nil {
		return nil, err
	}
	s.ns.dm.handleHeartbeat(dn, hb)
	if hb.FailedVolumes > 0 {
		s.ns.log.Printf("BLOCK* heartbeat: %s reports %d failed volume(s)", dn, hb.FailedVolumes)
	}
	cmds := dn.drainCommands(s.ns.bm.cfg.InvalidateLimitPerHeartbeat)
	for _, c := range cmds {
		if c.Action == proto.ActionInvalidate {
			s.ns.log.Printf("BLOCK* BlockManager: ask %s to delete %d blocks", dn, len(c.Blocks))
		}
	}
	return &proto.HeartbeatResponse{Commands: cmds}, nil
}

// BlockReport queues a full block report for processing.
func (s *DatanodeProtocolServer) BlockReport(report proto.BlockReport) error {
	dn, err := s.ns.dm.getDatanode(report.Registration)
	if err != nil {
		return err
	}
	s.ns.bm.enqueueBlockOp(func() { s.ns.bm.processFullReport(dn, report) })
	return nil
}

// BlockReceivedAndDeleted handles an incremental block report.
func (s *DatanodeProtocolServer) BlockReceivedAndDeleted(ibr proto.IncrementalBlockReport) error {
	dn, err := s.ns.dm.getDatanode(ibr.Registration)
	if err != nil {
		return err
	}
	for _, rdbi := range ibr.Blocks {
		if rdbi.Status == proto.BlockDeleted {
			s.ns.bm.removeStoredBlock(rdbi.Block, dn)
		}
	}
	s.ns.bm.enqueueBlockOp(func() { s.ns.bm.processIncrementalBlockReport(dn, ibr) })
	return nil
}

// ErrorReport is sent by a datanode on disk errors.
func (s *DatanodeProtocolServer) ErrorReport(reg proto.DatanodeRegistration, code int, msg string) {
	s.ns.log.Printf("Error report from %s: %s (code %d)", reg.Addr, msg, code)
}
