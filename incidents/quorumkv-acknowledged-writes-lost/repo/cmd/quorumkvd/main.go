// Command quorumkvd runs one member of a quorumkv cluster and serves the
// client HTTP API.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quorumkv/quorumkv/internal/zap"
	"github.com/quorumkv/quorumkv/kvserver"
)

func main() {
	id := flag.Uint64("id", 1, "member id")
	cluster := flag.String("cluster", "1=127.0.0.1:2380", "comma separated id=peer-addr list")
	clientAddr := flag.String("listen-client", "127.0.0.1:2379", "client API address")
	dataDir := flag.String("data-dir", "data", "WAL directory")
	tick := flag.Duration("tick", 100*time.Millisecond, "raft tick interval")
	election := flag.Int("election-ticks", 10, "ticks without a leader before campaigning")
	flag.Parse()

	lg := zap.NewProduction()
	peers := map[uint64]string{}
	for _, kv := range strings.Split(*cluster, ",") {
		parts := strings.SplitN(kv, "=", 2)
		pid, err := strconv.ParseUint(parts[0], 10, 64)
		if err != nil || len(parts) != 2 {
			lg.Error("invalid --cluster entry", zap.String("entry", kv))
			os.Exit(2)
		}
		peers[pid] = parts[1]
	}

	srv, err := kvserver.NewServer(kvserver.Config{
		ID: *id, Peers: peers, TickInterval: *tick, ElectionTicks: *election,
		RequestTimeout: 5 * time.Second, WALDir: *dataDir, Logger: lg,
	})
	if err != nil {
		lg.Error("failed to start member", zap.Error(err))
		os.Exit(1)
	}
	pl, err := net.Listen("tcp", peers[*id])
	if err != nil {
		lg.Error("failed to listen for peers", zap.Error(err))
		os.Exit(1)
	}
	go srv.Transport().Serve(pl)

	http.HandleFunc("/v1/kv/", func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/v1/kv/")
		ctx := r.Context()
		switch r.Method {
		case http.MethodGet:
			kv, rev, err := srv.Get(ctx, key)
			writeResult(w, rev, kv, err)
		case http.MethodPut:
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			rev, err := srv.Put(ctx, key, body)
			writeResult(w, rev, nil, err)
		case http.MethodDelete:
			_, rev, err := srv.Delete(ctx, key)
			writeResult(w, rev, nil, err)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	http.HandleFunc("/v1/leader", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]uint64{"leader": srv.Leader()})
	})
	lg.Info("serving client traffic", zap.String("address", *clientAddr))
	if err := http.ListenAndServe(*clientAddr, nil); err != nil {
		lg.Error("client listener stopped", zap.Error(err))
	}
	srv.Stop()
}

type response struct {
	Revision uint64      `json:"revision"`
	KV       interface{} `json:"kv,omitempty"`
	Error    string      `json:"error,omitempty"`
}

func writeResult(w http.ResponseWriter, rev uint64, kv interface{}, err error) {
	resp := response{Revision: rev, KV: kv}
	status := http.StatusOK
	switch {
	case err == nil:
	case errors.Is(err, kvserver.ErrKeyNotFound):
		status = http.StatusNotFound
		resp.KV = nil
	case errors.Is(err, kvserver.ErrNotLeader):
		status = http.StatusMisdirectedRequest
	case errors.Is(err, kvserver.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusGatewayTimeout
	default:
		status = http.StatusInternalServerError
	}
	if err != nil {
		resp.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(resp)
}
