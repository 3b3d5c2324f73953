package namenode

import (
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/stratafs/strata/proto"
)

// INodeFile is a file in the namespace.
type INodeFile struct {
	Path        string
	Replication int16
	Blocks      []*BlockInfo
	Mtime       time.Time
}

// Namesystem owns the namespace and the block manager. A single
// reader/writer lock protects the namespace, the blocks map, every BlockInfo
// and the replication queues.
type Namesystem struct {
	fsLock sync.RWMutex
	files  map[string]*INodeFile
	bm     *BlockManager
	dm     *DatanodeManager
	log    *log.Logger
	nextID proto.BlockID
}

// NewNamesystem creates an empty namespace.
func NewNamesystem(cfg Config) *Namesystem {
	ns := &Namesystem{
		files:  make(map[string]*INodeFile),
		log:    log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds),
		nextID: 1073741825,
	}
	ns.dm = newDatanodeManager(ns, cfg)
	ns.bm = newBlockManager(ns, ns.dm, cfg)
	return ns
}

func (ns *Namesystem) readLock()    { ns.fsLock.RLock() }
func (ns *Namesystem) readUnlock()  { ns.fsLock.RUnlock() }
func (ns *Namesystem) writeLock()   { ns.fsLock.Lock() }
func (ns *Namesystem) writeUnlock() { ns.fsLock.Unlock() }

// CreateFile adds a file with the given block sizes, placing each block on
// the chosen targets.
func (ns *Namesystem) CreateFile(path string, replication int16, blockSizes []int64) (*INodeFile, error) {
	ns.writeLock()
	defer ns.writeUnlock()
	if _, ok := ns.files[path]; ok {
		return nil, fmt.Errorf("file already exists: %s", path)
	}
	f := &INodeFile{Path: path, Replication: replication, Mtime: time.Now()}
	for _, sz := range blockSizes {
		b := proto.Block{ID: ns.nextID, GenStamp: 1001, NumBytes: sz}
		ns.nextID++
		bi := ns.bm.addBlockCollection(b, f)
		f.Blocks = append(f.Blocks, bi)
	}
	ns.files[path] = f
	ns.log.Printf("DIR* completeFile: %s is closed by client with %d blocks", path, len(f.Blocks))
	return f, nil
}

// Delete removes a file and schedules invalidation of its replicas.
func (ns *Namesystem) Delete(path string) error {
	ns.writeLock()
	defer ns.writeUnlock()
	f, ok := ns.files[path]
	if !ok {
		return fmt.Errorf("file does not exist: %s", path)
	}
	delete(ns.files, path)
	for _, bi := range f.Blocks {
		ns.bm.removeBlock(bi)
	}
	ns.log.Printf("DIR* delete: %s removed, %d blocks scheduled for invalidation", path, len(f.Blocks))
	return nil
}

// SetReplication changes the replication factor of a file.
func (ns *Namesystem) SetReplication(path string, replication int16) error {
	ns.writeLock()
	defer ns.writeUnlock()
	f, ok := ns.files[path]
	if !ok {
		return fmt.Errorf("file does not exist: %s", path)
	}
	old := f.Replication
	f.Replication = replication
	for _, bi := range f.Blocks {
		ns.bm.setReplication(bi, old, replication)
	}
	ns.log.Printf("DIR* setReplication: replication for %s changed from %d to %d", path, old, replication)
	return nil
}

// ListFiles returns the paths in the namespace, sorted.
func (ns *Namesystem) ListFiles() []string {
	ns.readLock()
	defer ns.readUnlock()
	out := make([]string, 0, len(ns.files))
	for p := range ns.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Start launches the background daemons.
func (ns *Namesystem) Start() {
	ns.dm.startHeartbeatMonitor()
	ns.bm.startDaemons()
}
