// Package client is the Go client for quorumkv's HTTP API. It follows the
// leader across members and checks that revisions never move backwards.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/quorumkv/quorumkv/internal/zap"
)

var ErrNotFound = errors.New("client: key not found")

type KV struct {
	Key            string `json:"Key"`
	Value          []byte `json:"Value"`
	CreateRevision uint64 `json:"CreateRevision"`
	ModRevision    uint64 `json:"ModRevision"`
	Version        int64  `json:"Version"`
}

type response struct {
	Revision uint64 `json:"revision"`
	KV       *KV    `json:"kv,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Client talks to one cluster.
type Client struct {
	endpoints []string
	hc        *http.Client
	lg        *zap.Logger

	mu      sync.Mutex
	current int
	lastRev uint64
}

func New(endpoints []string, lg *zap.Logger) *Client {
	return &Client{endpoints: endpoints, hc: &http.Client{Timeout: 6 * time.Second}, lg: lg.Named("kvclient")}
}

func (c *Client) do(ctx context.Context, method, key string, body []byte) (*response, error) {
	var lastErr error
	for attempt := 0; attempt < 2*len(c.endpoints); attempt++ {
		c.mu.Lock()
		ep := c.endpoints[c.current]
		c.mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, method, "http://"+ep+"/v1/kv/"+key, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			lastErr = err
			c.lg.Warn("endpoint unavailable, switching", zap.String("endpoint", ep), zap.Error(err))
			c.rotate()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r response
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("client: bad response from %s: %w", ep, err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			c.observe(method, key, r.Revision)
			return &r, nil
		case http.StatusNotFound:
			c.observe(method, key, r.Revision)
			return &r, ErrNotFound
		case http.StatusMisdirectedRequest, http.StatusGatewayTimeout:
			lastErr = errors.New(r.Error)
			c.rotate()
			time.Sleep(100 * time.Millisecond)
			continue
		default:
			return nil, fmt.Errorf("client: %s %s: %s", method, key, r.Error)
		}
	}
	return nil, fmt.Errorf("client: no endpoint accepted the request: %w", lastErr)
}

func (c *Client) rotate() {
	c.mu.Lock()
	c.current = (c.current + 1) % len(c.endpoints)
	c.mu.Unlock()
}

// observe records the cluster revision seen in a response. Revisions are
// monotonic cluster-wide, so a smaller one means this client saw a write
// that the cluster no longer has.
func (c *Client) observe(method, key string, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev < c.lastRev {
		c.lg.Warn("cluster revision went backwards", zap.String("op", method), zap.String("key", key),
			zap.Uint64("last-seen-revision", c.lastRev), zap.Uint64("revision", rev),
			zap.String("endpoint", c.endpoints[c.current]))
		return
	}
	c.lastRev = rev
}

// Put writes value under key.
func (c *Client) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	r, err := c.do(ctx, http.MethodPut, key, value)
	if err != nil {
		return 0, err
	}
	return r.Revision, nil
}

// Get reads key.
func (c *Client) Get(ctx context.Context, key string) (*KV, uint64, error) {
	r, err := c.do(ctx, http.MethodGet, key, nil)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, r.Revision, err
		}
		return nil, 0, err
	}
	return r.KV, r.Revision, nil
}
