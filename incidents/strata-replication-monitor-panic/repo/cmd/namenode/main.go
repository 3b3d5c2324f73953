// Command namenode runs the strata metadata server.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/stratafs/strata/namenode"
	"github.com/stratafs/strata/proto"
)

func main() {
	addr := flag.String("rpc-address", ":8020", "datanode RPC address")
	replInterval := flag.Duration("replication-interval", namenode.DefaultConfig().ReplicationInterval, "replication monitor period")
	streams := flag.Int("max-replication-streams", namenode.DefaultConfig().MaxReplicationStreams, "concurrent transfers per source")
	flag.Parse()

	cfg := namenode.DefaultConfig()
	cfg.ReplicationInterval = *replInterval
	cfg.MaxReplicationStreams = *streams

	ns := namenode.NewNamesystem(cfg)
	srv := namenode.NewDatanodeProtocolServer(ns)
	ns.Start()

	mux := http.NewServeMux()
	handle := func(path string, fn func(dec *json.Decoder) (interface{}, error)) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			out, err := fn(json.NewDecoder(r.Body))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(out)
		})
	}
	handle("/dn/register", func(dec *json.Decoder) (interface{}, error) {
		var reg proto.DatanodeRegistration
		if err := dec.Decode(&reg); err != nil {
			return nil, err
		}
		return nil, srv.RegisterDatanode(reg)
	})
	handle("/dn/heartbeat", func(dec *json.Decoder) (interface{}, error) {
		var hb proto.Heartbeat
		if err := dec.Decode(&hb); err != nil {
			return nil, err
		}
		return srv.SendHeartbeat(hb)
	})
	handle("/dn/blockreport", func(dec *json.Decoder) (interface{}, error) {
		var br proto.BlockReport
		if err := dec.Decode(&br); err != nil {
			return nil, err
		}
		return nil, srv.BlockReport(br)
	})
	handle("/dn/ibr", func(dec *json.Decoder) (interface{}, error) {
		var ibr proto.IncrementalBlockReport
		if err := dec.Decode(&ibr); err != nil {
			return nil, err
		}
		return nil, srv.BlockReceivedAndDeleted(ibr)
	})

	go func() {
		log.Printf("NameNode RPC up at: %s", *addr)
		if err := http.ListenAndServe(*addr, mux); err != nil {
			log.Fatalf("RPC server failed: %v", err)
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	log.Printf("SHUTDOWN_MSG: received %s, shutting down NameNode", s)
}
