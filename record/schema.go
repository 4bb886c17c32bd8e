package record

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/nvshbench/nvshbench/internal/units"
)

// SchemaVersion is the version of the format this tool writes. Readers refuse
// files whose header carries a newer version. Version 2: the one timer rule
// (events; the in-kernel timer as kernel_timer), collectives' launch mode
// (params.launch), the links' ceilings (header.links), floors, flags and
// unverifiable points. Version 3: a point several PEs timed is the slowest
// PE's time at each launch (schema 2 kept PE 0's), with every PE's own
// timing beside it (pe_times, rank_median_s, rank_fastest_s, straggler),
// and a point-to-point point records its pair. Version 1 and 2 files still
// read (schema 1's in-kernel timer rows and its collectives without a
// launch mode are flagged, never figures).
const SchemaVersion = 3

// Record types, the "type" field of every line.
const (
	TypeHeader = "header"
	TypePoint  = "point"
)

// Header is the first record of a results file: the provenance of the run.
type Header struct {
	Type        string            `json:"type"` // always "header"
	Schema      int               `json:"schema"`
	Tool        string            `json:"tool"`
	ToolVersion string            `json:"tool_version"`
	Commit      string            `json:"commit,omitempty"`
	Created     string            `json:"created"` // RFC 3339
	Argv        []string          `json:"argv,omitempty"`
	Host        string            `json:"host,omitempty"`
	Synthetic   bool              `json:"synthetic,omitempty"` // invented numbers (test fixtures)
	Label       string            `json:"label,omitempty"`
	GPUs        []GPU             `json:"gpus,omitempty"`
	Driver      string            `json:"driver,omitempty"`
	CUDA        string            `json:"cuda,omitempty"` // runtime version
	NVSHMEM     string            `json:"nvshmem,omitempty"`
	NCCL        string            `json:"nccl,omitempty"`
	PEs         int               `json:"pes,omitempty"`
	Nodes       int               `json:"nodes,omitempty"`
	Topology    string            `json:"topology,omitempty"` // e.g. nvidia-smi topo -m, or the P2P matrix
	Env         map[string]string `json:"env,omitempty"`      // NVSHMEM_*, NCCL_*, CUDA_* at run time
	Notes       []string          `json:"notes,omitempty"`
	// Run is what of the run's configuration changes what a point means
	// without showing in its parameters; a resumed run must match it.
	Run *RunSetup `json:"run,omitempty"`
	// Capabilities is what the job could do, as the waivers saw it.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	// Pair is the pair of PEs the run's point-to-point rows measure, as
	// its path chose it (a point that names its own records that one);
	// nil where the job has none (the notes say why) or the file predates
	// pairs (PE 0 towards PE 1, or PE 0 alone).
	Pair *Pair `json:"pair,omitempty"`
	// Links are the physical ceilings of the paths between (and within) the
	// job's GPUs: every bandwidth is checked against its path's.
	Links []Link `json:"links,omitempty"`
}

// Link is one physical path's ceiling: between two GPUs (NVLink, PCIe) or
// within one (its memory, for copies that stay on the GPU). GPUs are named
// by host and PCI bus id, as Header.GPUs names them.
type Link struct {
	Host       string  `json:"host,omitempty"`
	From       string  `json:"from"`                   // PCI bus id
	To         string  `json:"to"`                     // PCI bus id (From for a GPU's own memory)
	Kind       string  `json:"kind"`                   // nvlink, nvswitch, pcie, memory
	Count      int     `json:"count,omitempty"`        // NVLinks
	PerLinkBps float64 `json:"per_link_bps,omitempty"` // one link, bytes/s per direction
	Bps        float64 `json:"bps"`                    // the ceiling, bytes/s of payload per direction
	Source     string  `json:"source"`                 // how it was found, in words
}

// Link kinds.
const (
	LinkNVLink   = "nvlink"   // direct NVLinks between two GPUs
	LinkNVSwitch = "nvswitch" // NVLinks to switches: the fewer of the two GPUs' links
	LinkPCIe     = "pcie"
	LinkMemory   = "memory" // within one GPU: a copy reads and writes each byte, so half the memory's rate
)

// GPUOfPE is the header's GPU that PE pe ran on (nil if the header does
// not say): the entry naming the PE, or the PEs spread evenly over the
// listed GPUs in order (one controller, PEs per GPU).
func (h *Header) GPUOfPE(pe int) *GPU {
	for i := range h.GPUs {
		if pe > 0 && h.GPUs[i].PE == pe { // a launcher's header lists every PE's GPU
			return &h.GPUs[i]
		}
	}
	if len(h.GPUs) == 0 || h.PEs <= 0 || h.PEs%len(h.GPUs) != 0 {
		return nil
	}
	i := pe / (h.PEs / len(h.GPUs))
	if i < 0 || i >= len(h.GPUs) {
		return nil
	}
	return &h.GPUs[i]
}

// LinkBetween is the ceiling of the path from GPU a to GPU b (the same GPU:
// its memory), or nil when the header records none.
func (h *Header) LinkBetween(a, b *GPU) *Link {
	if a == nil || b == nil {
		return nil
	}
	same := samePCI(a.PCIBusID, b.PCIBusID) && a.Host == b.Host
	for i := range h.Links {
		l := &h.Links[i]
		if l.Host != "" && a.Host != "" && l.Host != a.Host {
			continue
		}
		if same && l.Kind == LinkMemory && samePCI(l.From, a.PCIBusID) {
			return l
		}
		if !same && l.Kind != LinkMemory && ((samePCI(l.From, a.PCIBusID) && samePCI(l.To, b.PCIBusID)) || (samePCI(l.From, b.PCIBusID) && samePCI(l.To, a.PCIBusID))) {
			return l
		}
	}
	return nil
}

// NormalPCI writes a PCI bus id one way ("00000000:1B:00.0" and
// "0000:1b:00.0" are the same device): lower case, a 4-digit domain.
func NormalPCI(id string) string {
	var dom, bus, dev, fn uint64
	if n, _ := fmt.Sscanf(strings.ToLower(strings.TrimSpace(id)), "%x:%x:%x.%x", &dom, &bus, &dev, &fn); n != 4 {
		return strings.ToLower(strings.TrimSpace(id))
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", dom, bus, dev, fn)
}

func samePCI(a, b string) bool { return a != "" && NormalPCI(a) == NormalPCI(b) }

// Pair is the two PEs a point-to-point point measured: From issued towards
// To and timed.
type Pair struct {
	From PairEnd `json:"from"`
	To   PairEnd `json:"to"`
	Kind string  `json:"kind"` // Pair*: what lies between the two
}

// PairEnd is one PE of a pair: its number, its GPU (the CUDA ordinal on
// its node) and its node.
type PairEnd struct {
	PE   int    `json:"pe"`
	GPU  int    `json:"gpu"`
	Node string `json:"node,omitempty"`
}

// What lies between the two PEs of a pair.
const (
	PairLoopback    = "loopback"     // one PE with itself: copies within its GPU
	PairSameGPU     = "same-gpu"     // two PEs of one GPU: a functional pair, no link crossed
	PairSameNode    = "same-node"    // two GPUs of one node: NVLink or PCIe
	PairAcrossNodes = "across-nodes" // two nodes: the network
)

// String names the pair: PE 0 (GPU 0, node a) → PE 8 (GPU 0, node b), and
// what lies between where it is not a link.
func (p *Pair) String() string {
	end := func(e PairEnd) string {
		if e.Node == "" {
			return fmt.Sprintf("PE %d (GPU %d)", e.PE, e.GPU)
		}
		return fmt.Sprintf("PE %d (GPU %d, %s)", e.PE, e.GPU, e.Node)
	}
	s := end(p.From) + " → " + end(p.To)
	switch p.Kind {
	case PairLoopback:
		s = end(p.From) + " with itself"
	case PairSameGPU:
		s += ", one GPU: functional, no link"
	}
	return s
}

// Capabilities is the job's capability probe: what decided which points ran
// and which were waived (every PE's GPU is in GPUs, the paths in Topology).
type Capabilities struct {
	SMs       int    `json:"sms"`       // the smallest SM count of the job's GPUs (full-GPU grids)
	L2Bytes   int64  `json:"l2_bytes"`  // the smallest L2 (which sizes are cache answers)
	NIC       string `json:"nic"`       // "present", or why remote paths are waived
	Multicast string `json:"multicast"` // "allowed", or why NVLS points are waived
}

// RunSetup is the part of a run's configuration that a resumed run must
// keep: the samples, warm-up and iterations behind every figure, whether
// points were verified, and the launch shape of the defaults.
type RunSetup struct {
	Samples int  `json:"samples"`
	Warmup  int  `json:"warmup"`
	Iters   int  `json:"iters"` // 0: calibrated
	Verify  bool `json:"verify"`
	CTAs    int  `json:"ctas"`
	Threads int  `json:"threads"`
	// CorruptChecks: every check was handed damaged output (the GPU test's
	// proof that each can fail): no point of such a file is a measurement.
	CorruptChecks bool `json:"corrupt_checks,omitempty"`
	// Timeout is the watchdog's limit on a point (seconds, --timeout), and
	// StartupTimeout what the first point of each worker group gets on top
	// for NVSHMEM's start-up (--startup-timeout). They change no figure: a
	// resumed run may set others.
	Timeout        float64 `json:"timeout_s,omitempty"`
	StartupTimeout float64 `json:"startup_timeout_s,omitempty"`
}

// SetupMismatch says that a results file was written by a setup other than
// the one about to append to it.
type SetupMismatch struct {
	File  string
	Diffs []string
}

func (e *SetupMismatch) Error() string {
	return fmt.Sprintf("%s was written by another setup (%s): resuming would mix them in one file; choose a new --out",
		e.File, strings.Join(e.Diffs, "; "))
}

// KnobNames lists, sorted, the NVSHMEM_ and NCCL_ variables either header
// recorded, but for those naming a bootstrap plugin's file
// (NVSHMEM_BOOTSTRAP_PLUGIN, NVSHMEM_BOOTSTRAP_<x>_PLUGIN): where a
// plugin lies differs between machines and changes nothing measured (the
// NVSHMEM version is compared on its own). nvshbench sets them itself; a
// file written before it did resumes and compares as before.
func KnobNames(a, b *Header) []string {
	keys := map[string]bool{}
	for _, h := range []*Header{a, b} {
		for k := range h.Env {
			if strings.HasPrefix(k, "NVSHMEM_BOOTSTRAP_") && strings.HasSuffix(k, "_PLUGIN") {
				continue
			}
			if strings.HasPrefix(k, "NVSHMEM_") || strings.HasPrefix(k, "NCCL_") {
				keys[k] = true
			}
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ResumeDiffs lists what differs between the header of an existing file
// (old) and the header of a run about to append to it (new): what the
// GPUs are, how many PEs, synthetic or measured, the schema and tool, the
// label, the NVSHMEM_ / NCCL_ environment, and the run setup.
func ResumeDiffs(old, new *Header) []string {
	var d []string
	diff := func(what string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			d = append(d, fmt.Sprintf("%s %v → %v", what, a, b))
		}
	}
	ns := new.Schema
	if ns == 0 {
		ns = SchemaVersion // the writer sets it
	}
	diff("schema", old.Schema, ns)
	diff("tool", old.Tool, new.Tool)
	diff("synthetic", old.Synthetic, new.Synthetic)
	diff("PEs", old.PEs, new.PEs)
	diff("label", fmt.Sprintf("%q", old.Label), fmt.Sprintf("%q", new.Label))
	gpus := func(h *Header) string {
		var ids []string
		for _, g := range h.GPUs {
			id := g.UUID
			if id == "" {
				id = g.Name
			}
			ids = append(ids, id)
		}
		return "[" + strings.Join(ids, " ") + "]"
	}
	diff("GPUs", gpus(old), gpus(new))
	diff("NVSHMEM", old.NVSHMEM, new.NVSHMEM)
	// Every variable that changes what is measured, wherever it came from
	// (--path sets NVSHMEM_DISABLE_P2P and NVSHMEM_IB_ENABLE_IBGDA; the
	// environment may too).
	for _, k := range KnobNames(old, new) {
		diff(k, fmt.Sprintf("%q", old.Env[k]), fmt.Sprintf("%q", new.Env[k]))
	}
	if old.Run != nil && new.Run != nil {
		diff("samples", old.Run.Samples, new.Run.Samples)
		diff("warmup", old.Run.Warmup, new.Run.Warmup)
		diff("iters", old.Run.Iters, new.Run.Iters)
		diff("verify", old.Run.Verify, new.Run.Verify)
		diff("ctas", old.Run.CTAs, new.Run.CTAs)
		diff("threads", old.Run.Threads, new.Run.Threads)
	}
	return d
}

// GPU describes one device seen by the run.
type GPU struct {
	Index       int    `json:"index"`          // CUDA device ordinal on its host
	PE          int    `json:"pe,omitempty"`   // the PE using it, where the header lists PEs
	Host        string `json:"host,omitempty"` // the node, where the header lists PEs
	Name        string `json:"name"`
	UUID        string `json:"uuid,omitempty"`
	PCIBusID    string `json:"pci_bus_id,omitempty"`
	SMs         int    `json:"sms,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	L2Bytes     int64  `json:"l2_bytes,omitempty"`
	ClockKHz    int    `json:"clock_khz,omitempty"`
	CC          string `json:"cc,omitempty"` // compute capability, "9.0"
}

// Status of a point.
type Status string

// The statuses a point can have.
const (
	StatusOK                 Status = "ok"
	StatusWaived             Status = "waived"              // this machine cannot run it; Reason says why
	StatusFailedVerification Status = "failed-verification" // ran, data wrong
	StatusError              Status = "error"               // did not complete; Reason has the message
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusOK, StatusWaived, StatusFailedVerification, StatusError:
		return true
	}
	return false
}

// Params are the parameters of a point. Together with the benchmark ID they
// identify it: compare matches points on ID + Params.
type Params struct {
	Size    int64  `json:"size,omitempty"`    // message size in bytes (per PE for collectives)
	Op      string `json:"op,omitempty"`      // put, get, p, g, sum, fetch_add, ...
	Scope   string `json:"scope,omitempty"`   // thread, warp, block, grid
	CTAs    int    `json:"ctas,omitempty"`    // CTAs per launch
	Threads int    `json:"threads,omitempty"` // threads per CTA
	PEs     int    `json:"pes,omitempty"`     // PEs / ranks taking part
	Path    string `json:"path,omitempty"`    // requested path: p2p, proxy, ibgda, auto
	Dir     string `json:"dir,omitempty"`     // uni, bidir
	DType   string `json:"dtype,omitempty"`   // float, bf16, u8, u64, ...
	Mode    string `json:"mode,omitempty"`    // blocking, nbi, graph, stream, ...
	Launch  string `json:"launch,omitempty"`  // collectives: per-op (one launch per operation) or fused (in one kernel)
	// Pair names the two PEs of a point-to-point point ("FROM:TO") where
	// the run asked for them (--pair); absent, the path chose them (the
	// point's pair records which).
	Pair  string            `json:"pair,omitempty"`
	Extra map[string]string `json:"extra,omitempty"` // anything else a suite varies
	// Env holds the NVSHMEM variables the point's workers ran with beyond
	// the run's environment (the header's env): set at nvshmem_init, so
	// the controller starts a worker group for each distinct Env (every PE
	// the same). NVSHMEM's forced collective algorithms use it.
	Env map[string]string `json:"env,omitempty"`

	// SMBudget is the SMs a transfer may use, one CTA an SM (bytes per SM,
	// record/persm: the compute kernel beside it has the others); 0: none
	// counted (a copy engine's, or a compute kernel on every SM). Files
	// before it kept the budget in CTAs: reading them moves it here.
	SMBudget int `json:"sm_budget,omitempty"`
}

// Launch modes of collectives: only rows of one mode are compared.
const (
	LaunchPerOp = "per-op" // one launch per operation (host APIs; device kernels launched once per operation)
	LaunchFused = "fused"  // the iterations looped inside one kernel (device implementations only)
)

// Key is a canonical, comparable string of the params (ordered key=value).
func (p Params) Key() string { return p.key(true) }

// KeyWithoutSize is Key with the size left out: the identity of a curve.
func (p Params) KeyWithoutSize() string { return p.key(false) }

func (p Params) key(withSize bool) string {
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	addInt := func(k string, v int64) {
		if v != 0 {
			add(k, strconv.FormatInt(v, 10))
		}
	}
	if withSize {
		addInt("size", p.Size)
	}
	add("op", p.Op)
	add("scope", p.Scope)
	addInt("ctas", int64(p.CTAs))
	addInt("threads", int64(p.Threads))
	addInt("sm_budget", int64(p.SMBudget))
	addInt("pes", int64(p.PEs))
	add("path", p.Path)
	add("dir", p.Dir)
	add("dtype", p.DType)
	add("mode", p.Mode)
	add("launch", p.Launch)
	add("pair", p.Pair)
	keys := make([]string, 0, len(p.Extra))
	for k := range p.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(k, p.Extra[k])
	}
	keys = keys[:0]
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("env."+k, p.Env[k])
	}
	return strings.Join(kv, " ")
}

// Metric names used in Point.Metrics.
const (
	MetricBandwidth = "bandwidth" // bytes moved / time, B/s
	MetricLatency   = "latency"   // seconds per operation
	MetricAlgBW     = "algbw"     // collectives: size / time, B/s
	MetricBusBW     = "busbw"     // collectives: algbw * bus factor, B/s
	MetricRate      = "rate"      // operations per second
	// MetricLink is the bytes that crossed to another GPU (Values
	// "remote_bytes") over the time: what a link carried (MoE).
	MetricLink = "link_bandwidth"
)

// Units of Summary.Unit: the base units of package units.
const (
	UnitBytesPerSec = units.BytesPerSec
	UnitSeconds     = units.Seconds
	UnitOpsPerSec   = units.OpsPerSec
)

// Summary summarises the per-sample values of one metric.
type Summary struct {
	Unit   string  `json:"unit"`
	Mean   float64 `json:"mean,omitempty"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	N      int     `json:"n"`
}

// Verification is the outcome of the data check of a point.
type Verification struct {
	Checked bool   `json:"checked"`          // false only with --no-verify or for points that cannot be checked
	OK      bool   `json:"ok"`               // every checked element matched
	Errors  int64  `json:"errors,omitempty"` // elements that did not match
	Detail  string `json:"detail,omitempty"` // first mismatch, pattern used
	// Unverifiable says why an ok point has nothing to check (an empty
	// kernel moves no data); every other ok point was checked.
	Unverifiable string `json:"unverifiable,omitempty"`
}

// Limit is the hardware limit measured in the same run that a figure is
// compared against.
type Limit struct {
	ID    string  `json:"id"`    // benchmark ID of the limit, e.g. limit/sm-copy
	Value float64 `json:"value"` // in the metric's unit (B/s)
}

// Point is one measured (or waived, or failed) point.
type Point struct {
	Type   string `json:"type"` // always "point"
	ID     string `json:"id"`
	Params Params `json:"params"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"` // for waived / error / failed-verification

	// Effective is what actually ran, as observed (not as requested): "p2p",
	// "proxy", "ibgda", "local", "nccl", "nvshmem", "copy-engine", ...
	Effective string `json:"effective,omitempty"`
	// Timer says which clock produced Samples: "events" (device events
	// around one launch that loops the operation) or "globaltimer" (in-kernel,
	// one sample per iteration).
	Timer string `json:"timer,omitempty"`
	// Iters is the number of operations each sample covers.
	Iters int `json:"iters,omitempty"`
	// Bytes is the payload that actually moved per operation (per PE), as
	// counted by the benchmark, not as requested.
	Bytes int64 `json:"bytes,omitempty"`
	// BusFactor converts algbw to busbw for collectives (nccl-tests factors).
	BusFactor float64 `json:"bus_factor,omitempty"`
	// Samples holds seconds per operation, one value per sample (a timed
	// launch). Where several PEs timed the point (a collective, MoE, a
	// bidirectional transfer) a sample is the slowest PE's time at that
	// launch: the operation has finished only when its last PE has.
	Samples []float64 `json:"samples_s,omitempty"`
	// RankMedian and RankFastest are, beside a figure several PEs timed,
	// the median PE's and the fastest PE's time at each launch.
	RankMedian  []float64 `json:"rank_median_s,omitempty"`
	RankFastest []float64 `json:"rank_fastest_s,omitempty"`
	// PETimes is every PE's own timing where several PEs timed the point
	// (one PE's samples are Samples, its pair says whose).
	PETimes []PETime `json:"pe_times,omitempty"`
	// Straggler is the PE the others differ from by more than
	// StragglerShare (FlagStraggler), derived from PETimes.
	Straggler *Straggler `json:"straggler,omitempty"`
	// Metrics derived from Samples, in base units.
	Metrics map[string]Summary `json:"metrics,omitempty"`
	// KernelTimer is the in-kernel per-iteration time (%globaltimer, seconds)
	// of the timed launches: the spread (p50, p99) behind the events figure,
	// which it must agree with (else the point is flagged).
	KernelTimer *Summary `json:"kernel_timer,omitempty"`
	// Limit is the best copy reference of the same path measured in the same
	// run; Ceiling the path's physical limit (Header.Links); Floor, for a
	// round trip, the in-run dependent-load chase of its path.
	Limit   *Limit `json:"limit,omitempty"`
	Ceiling *Limit `json:"ceiling,omitempty"`
	Floor   *Limit `json:"floor,omitempty"`
	// Pair is the two PEs a point-to-point point measured (nil for what
	// every PE takes part in, and in files before pairs: PE 0 towards
	// PE 1, or PE 0 alone).
	Pair   *Pair        `json:"pair,omitempty"`
	Verify Verification `json:"verify"`
	// Flags are what the checks of the numbers found (Flag*): derived from
	// the point and its header when written and again when read.
	Flags []string `json:"flags,omitempty"`
	// Values are a suite's counts and ratios beside the samples (MoE:
	// remote_bytes, load_rank, load_expert, floor_s), in base units.
	Values map[string]float64 `json:"values,omitempty"`
	// Clock is the SM clock and power its GPU ran at while the point ran
	// (NVML, sampled; nil where nothing was).
	Clock *Clock `json:"clock,omitempty"`
	// WorkingSetBytes and L2Resident tell whether the data fit in L2, where
	// figures do not measure the link.
	WorkingSetBytes int64  `json:"working_set_bytes,omitempty"`
	L2Resident      bool   `json:"l2_resident,omitempty"`
	Time            string `json:"time,omitempty"` // RFC 3339, when the point finished
	// Code is what the benchmark's timed operation runs, as the binary
	// reading the file declares it (Reader.Code): not stored; nil where
	// the reader was given no declaration of the ID.
	Code *Code `json:"-"`
}

// Metric returns the named metric summary and whether it exists.
func (p *Point) Metric(name string) (Summary, bool) {
	s, ok := p.Metrics[name]
	return s, ok
}

// MatchKey identifies a point across files: ID plus params.
func (p *Point) MatchKey() string { return p.ID + " " + p.Params.Key() }

// The plausible range of a sample (seconds per operation).
const (
	MinSample = 1e-12
	MaxSample = 86400.0
)

// Validate checks the point's invariants.
func (p *Point) Validate() error {
	if p.Type != TypePoint {
		return fmt.Errorf("record type %q, want %q", p.Type, TypePoint)
	}
	if p.ID == "" {
		return fmt.Errorf("point has no id")
	}
	if c := controlIn(append([]string{p.ID, p.Params.Op, p.Params.Scope, p.Params.Path, p.Params.Dir, p.Params.DType, p.Params.Mode, p.Params.Launch, p.Params.Pair}, append(extraTexts(p.Params.Extra), extraTexts(p.Params.Env)...)...)...); c != "" {
		return fmt.Errorf("point %q: its id or params hold a control character (%s): not a record nvshbench wrote", p.ID, c)
	}
	if !p.Status.Valid() {
		return fmt.Errorf("point %s: unknown status %q", p.ID, p.Status)
	}
	if p.Params.Size < 0 {
		return fmt.Errorf("point %s: negative size %d", p.ID, p.Params.Size)
	}
	if p.Status != StatusOK && p.Reason == "" {
		return fmt.Errorf("point %s: status %s without a reason", p.ID, p.Status)
	}
	all := append(append(append([]float64(nil), p.Samples...), p.RankMedian...), p.RankFastest...)
	for _, t := range p.PETimes {
		all = append(all, t.Samples...)
	}
	for _, s := range all {
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
			return fmt.Errorf("point %s: sample %v is not a positive time", p.ID, s)
		}
		// A figure derived from it must stay finite and mean something: no
		// operation takes under a picosecond or over a day.
		if s < MinSample || s > MaxSample {
			return fmt.Errorf("point %s: sample %v s is not a plausible time per operation (%g..%g s)", p.ID, s, MinSample, MaxSample)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Values)) {
		v := p.Values[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("point %s: value %s is not finite", p.MatchKey(), k)
		}
		if d, ok := Declared(k); ok && (v < d.Min || v > d.Max) {
			return fmt.Errorf("point %s: value %s = %g (%s) is outside its declared range %g..%g (%s): a damaged record", p.MatchKey(), k, v, d.Unit, d.Min, d.Max, d.Doc)
		}
	}
	if err := p.Clock.validate(); err != nil {
		return fmt.Errorf("point %s: %v", p.MatchKey(), err)
	}
	for name, m := range p.Metrics {
		if m.Unit == "" {
			return fmt.Errorf("point %s: metric %s has no unit", p.ID, name)
		}
		for _, v := range []float64{m.Median, m.Min, m.Max} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("point %s: metric %s is not finite", p.ID, name)
			}
		}
	}
	return nil
}

// Validate checks the header's invariants.
func (h *Header) Validate() error {
	if h.Type != TypeHeader {
		return fmt.Errorf("first record has type %q, want %q", h.Type, TypeHeader)
	}
	if h.Schema <= 0 {
		return fmt.Errorf("header has no schema version")
	}
	if h.Schema > SchemaVersion {
		return &SchemaError{Got: h.Schema, ToolVersion: h.ToolVersion}
	}
	if c := controlIn(h.Label, h.Host); c != "" {
		return fmt.Errorf("header: the label or host holds a control character (%s)", c)
	}
	return nil
}

// ControlIn names the first control character in texts ("" if none): such
// characters in a name would reach a terminal as commands.
func ControlIn(texts ...string) string { return controlIn(texts...) }

func controlIn(texts ...string) string {
	for _, t := range texts {
		for _, r := range t {
			if unicode.IsControl(r) {
				return strconv.QuoteRune(r)
			}
		}
	}
	return ""
}

func extraTexts(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}

// SchemaError reports a file written with a newer schema than this tool reads.
type SchemaError struct {
	Got         int
	ToolVersion string
}

func (e *SchemaError) Error() string {
	by := ""
	if e.ToolVersion != "" {
		by = " (written by nvshbench " + e.ToolVersion + ")"
	}
	return fmt.Sprintf("schema version %d%s is newer than this tool reads (%d): upgrade nvshbench", e.Got, by, SchemaVersion)
}
