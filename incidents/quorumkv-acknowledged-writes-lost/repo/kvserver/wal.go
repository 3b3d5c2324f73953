package kvserver

import (
	"bufio"
	"encoding/gob"
	"io"
	"os"
	"path/filepath"

	"github.com/quorumkv/quorumkv/internal/zap"
	"github.com/quorumkv/quorumkv/raft"
)

// wal persists hard state and log entries. Records are gob-encoded and
// appended to a single segment; the last hard state record wins.
type wal struct {
	f   *os.File
	w   *bufio.Writer
	enc *gob.Encoder
	lg  *zap.Logger
}

type walRecord struct {
	HardState *raft.HardState
	Entries   []raft.Entry
}

func openWAL(dir string, lg *zap.Logger) (*wal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "0000000000000000.wal"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &wal{f: f, lg: lg.Named("wal")}, nil
}

// readAll replays the segment and positions the writer at its end.
func (w *wal) readAll() (raft.HardState, []raft.Entry, error) {
	var hs raft.HardState
	var ents []raft.Entry
	dec := gob.NewDecoder(bufio.NewReader(w.f))
	for {
		var rec walRecord
		err := dec.Decode(&rec)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return hs, nil, err
		}
		if rec.HardState != nil {
			hs = *rec.HardState
		}
		for _, e := range rec.Entries {
			if n := len(ents); n > 0 && e.Index <= ents[n-1].Index {
				ents = ents[:e.Index-ents[0].Index]
			}
			ents = append(ents, e)
		}
	}
	if _, err := w.f.Seek(0, io.SeekEnd); err != nil {
		return hs, nil, err
	}
	w.w = bufio.NewWriter(w.f)
	w.enc = gob.NewEncoder(w.w)
	w.lg.Info("replayed WAL", zap.Int("entries", len(ents)), zap.Uint64("term", hs.Term))
	return hs, ents, nil
}

func (w *wal) save(hs raft.HardState, msgs []raft.Message) error {
	rec := walRecord{HardState: &hs}
	for _, m := range msgs {
		if m.Type == raft.MsgAppResp && !m.Reject {
			rec.Entries = append(rec.Entries, m.Entries...)
		}
	}
	if err := w.enc.Encode(&rec); err != nil {
		return err
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	return w.f.Sync()
}

func (w *wal) close() error {
	if w.w != nil {
		w.w.Flush()
	}
	return w.f.Close()
}
