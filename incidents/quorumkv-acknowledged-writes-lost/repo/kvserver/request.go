package kvserver

import (
	"encoding/json"
	"fmt"
)

type opType string

const (
	opPut    opType = "put"
	opDelete opType = "delete"
	opNoop   opType = "noop"
)

// request is what a proposal carries through the log.
type request struct {
	ID    uint64 `json:"id"`
	Op    opType `json:"op"`
	Key   string `json:"key"`
	Value []byte `json:"value,omitempty"`
}

func (r *request) marshal() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("kvserver: marshal request: %v", err))
	}
	return b
}

func unmarshalRequest(b []byte) (*request, error) {
	if len(b) == 0 {
		return &request{Op: opNoop}, nil
	}
	var r request
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// result is delivered to the waiting client once a request is applied.
type result struct {
	Revision uint64
	Deleted  bool
	Err      error
}
