package cuda

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Fabric joins the fakes of one job: their collective calls meet there, as
// the real PEs' calls meet in NVSHMEM. A call that the PEs do not all make,
// or make with different arguments, is reported as a divergence (the real
// library would hang instead), so tests catch the bug the real job would
// deadlock on.
type Fabric interface {
	// Meet is collective call seq of rank: every rank's payload in rank
	// order, or an error naming the ranks whose calls differ or never came.
	Meet(rank, nranks int, seq int64, call string, payload []byte) ([][]byte, error)
}

// DivergenceError says that the PEs' sequences of collective calls parted.
type DivergenceError struct{ Msg string }

func (e *DivergenceError) Error() string { return e.Msg }

type entry struct {
	Call    string `json:"call"`
	Payload []byte `json:"payload"`
}

func compare(seq int64, got []entry) ([][]byte, error) {
	out := make([][]byte, len(got))
	for r, e := range got {
		if e.Call != got[0].Call {
			return nil, &DivergenceError{fmt.Sprintf("collective call %d diverged: PE 0 made %q, PE %d made %q", seq, got[0].Call, r, e.Call)}
		}
		out[r] = e.Payload
	}
	return out, nil
}

// MemFabric joins fakes running in one process (unit tests).
type MemFabric struct {
	mu      sync.Mutex
	cond    *sync.Cond
	calls   map[int64][]*entry
	Timeout time.Duration
}

// NewMemFabric returns a fabric whose calls wait at most timeout for the
// other ranks.
func NewMemFabric(timeout time.Duration) *MemFabric {
	f := &MemFabric{calls: map[int64][]*entry{}, Timeout: timeout}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// Meet implements Fabric.
func (f *MemFabric) Meet(rank, nranks int, seq int64, call string, payload []byte) ([][]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls[seq]
	if c == nil {
		c = make([]*entry, nranks)
		f.calls[seq] = c
	}
	c[rank] = &entry{Call: call, Payload: payload}
	f.cond.Broadcast()
	deadline := time.Now().Add(f.Timeout)
	timer := time.AfterFunc(f.Timeout, func() { f.mu.Lock(); f.cond.Broadcast(); f.mu.Unlock() })
	defer timer.Stop()
	for {
		missing := -1
		for r, e := range c {
			if e == nil {
				missing = r
				break
			}
		}
		if missing < 0 {
			got := make([]entry, nranks)
			for r, e := range c {
				got[r] = *e
			}
			return compare(seq, got)
		}
		if time.Now().After(deadline) {
			return nil, &DivergenceError{fmt.Sprintf("collective call %d (%s) of PE %d: PE %d never made it within %s", seq, call, rank, missing, f.Timeout)}
		}
		f.cond.Wait()
	}
}

// DirFabric joins fakes running as separate processes through files in a
// folder: rank r's call seq is the file seq.r.
type DirFabric struct {
	Dir     string
	Timeout time.Duration
}

// Meet implements Fabric.
func (f DirFabric) Meet(rank, nranks int, seq int64, call string, payload []byte) ([][]byte, error) {
	name := func(r int) string { return filepath.Join(f.Dir, fmt.Sprintf("%08d.%03d", seq, r)) }
	b, err := json.Marshal(entry{Call: call, Payload: payload})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, err
	}
	tmp := name(rank) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, name(rank)); err != nil {
		return nil, err
	}
	got := make([]entry, nranks)
	have := make([]bool, nranks)
	deadline := time.Now().Add(f.Timeout)
	for wait := time.Millisecond; ; {
		all := true
		for r := 0; r < nranks; r++ {
			if have[r] {
				continue
			}
			b, err := os.ReadFile(name(r))
			if err != nil {
				all = false
				continue
			}
			if err := json.Unmarshal(b, &got[r]); err != nil {
				return nil, fmt.Errorf("fabric file %s: %v", name(r), err)
			}
			have[r] = true
		}
		if all {
			return compare(seq, got)
		}
		if time.Now().After(deadline) {
			for r := range have {
				if !have[r] {
					return nil, &DivergenceError{fmt.Sprintf("collective call %d (%s) of PE %d: PE %d never made it within %s", seq, call, rank, r, f.Timeout)}
				}
			}
		}
		time.Sleep(wait)
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}
