package cuda

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/nvshbench/nvshbench/cuda/shim"
)

// Fake implements Lib without a GPU: the H200-like GPUs of a fake node or
// cluster (FakeCluster: NVSHBENCH_FAKE_GPUS, NVSHBENCH_FAKE_NODES,
// NVSHBENCH_FAKE_TOPO) whose transfers follow a simple model of their paths,
// rates and faults, so tests find a fault as a user would. Tests of
// everything above the shim (harness, launcher, commands) run against it.
// Its collective calls meet on a Fabric when one is set
// (NVSHBENCH_FAKE_RDV names a folder; the controller sets it for fake
// runs), so a divergence between PEs fails instead of passing. Environment
// knobs let tests reach the failure paths:
//
//	NVSHBENCH_FAKE_HANG_SIZE=N     a point of size N never returns (watchdog tests)
//	NVSHBENCH_FAKE_CORRUPT_SIZE=N  a point of size N reports mismatching bytes
//	NVSHBENCH_FAKE_PATH=p2p|local|remote  the path to every other PE (default:
//	                               the cluster's); a PE reaches itself locally, as on a GPU
//	NVSHBENCH_FAKE_NVSHMEM=3.8.0   the NVSHMEM the fake was "built against" (default the
//	                               pinned 3.4.5): the rows of a newer one are waived as the
//	                               shim waives them (fakeNewer)
//	NVSHBENCH_FAKE_NO_NVML=1       no sensor: the clocks and power are not sampled, as on a
//	                               machine without NVML (Sensor)
//	NVSHBENCH_FAKE_CE_ON_SM=1      the copy engine's copies need an SM: its rows' SM check
//	                               says so (fakeCEValues; default: they need none)
//	NVSHBENCH_FAKE_BAD_VALUE=unknown|unit|many|range  a point with named values (the copy
//	                               engine's rows) gives one more of a name no reader
//	                               declares, one in another unit, or more than the result
//	                               holds (the shim's put_value then fails the point), or
//	                               its ce_sm_free as 2 (outside its declared 0..1)
type Fake struct {
	rank, nranks int
	inited       bool
	fabric       Fabric
	seq          int64
	cl           *FakeCluster
	clErr        error // the cluster's spec did not parse: Init fails with it
	dev          int   // this PE's device
	devs         []int // every PE's device, once Job has exchanged them
}

// NewFake returns a fake device library; NVSHBENCH_FAKE_RDV (plus
// NVSHBENCH_WORKER_GROUP) names the folder of its fabric.
func NewFake() *Fake {
	var fabric Fabric
	if d := os.Getenv("NVSHBENCH_FAKE_RDV"); d != "" {
		timeout := 20 * time.Second
		if v, err := time.ParseDuration(os.Getenv("NVSHBENCH_FAKE_RDV_TIMEOUT")); err == nil {
			timeout = v
		}
		fabric = DirFabric{Dir: filepath.Join(d, "g"+os.Getenv("NVSHBENCH_WORKER_GROUP")), Timeout: timeout}
	}
	return NewFakeOn(fabric)
}

// NewFakeOn returns a fake whose collective calls meet on fabric.
func NewFakeOn(fabric Fabric) *Fake {
	f := &Fake{fabric: fabric}
	f.cl, f.clErr = FakeClusterFromEnv()
	if f.clErr != nil {
		f.cl = &FakeCluster{GPUs: 1, Nodes: 1}
	}
	return f
}

// fakeSMClockHz and fakePowerW are an H200's SM clock and the power the
// fake's GPU draws at it.
const (
	fakeSMClockHz = 1980e6
	fakePowerW    = 500
)

// Sensor is device dev's: the SM clock the nominal 1980 MHz times its
// share (NVSHBENCH_FAKE_TOPO's clock:G=P%, the fault of a GPU capped by
// power or heat: its points take longer and say so), the power 500 W
// times it; none with NVSHBENCH_FAKE_NO_NVML=1.
func (f *Fake) Sensor(dev int) (Sensor, error) {
	if err := f.device("sensor", dev); err != nil {
		return nil, err
	}
	if envInt("NVSHBENCH_FAKE_NO_NVML") == 1 {
		return nil, fmt.Errorf("NVML not available: libnvidia-ml.so.1 cannot be loaded (the fake GPU's NVSHBENCH_FAKE_NO_NVML=1)")
	}
	c := f.cl.ClockOf(dev)
	return fakeSensor{Reading{SMClockHz: fakeSMClockHz * c, PowerW: fakePowerW * c}}, nil
}

type fakeSensor struct{ r Reading }

func (s fakeSensor) Read() (Reading, error) { return s.r, nil }

// FakeUID is the unique ID the fake hands out.
var FakeUID = []byte("fake-nvshmem-unique-id")

// meet makes a collective call; without a fabric every other PE is assumed
// to have made the same call with the same payload.
func (f *Fake) meet(call string, payload []byte) ([][]byte, error) {
	f.seq++
	if f.fabric == nil || f.nranks <= 1 {
		out := make([][]byte, f.nranks)
		for i := range out {
			out[i] = payload
		}
		return out, nil
	}
	return f.fabric.Meet(f.rank, f.nranks, f.seq, call, payload)
}

func (f *Fake) DeviceCount() (int, error) { return f.cl.Devices(), nil }

func (f *Fake) device(op string, dev int) error {
	if dev < 0 || dev >= f.cl.Devices() {
		return &Error{Op: op, Status: StatusErr, Msg: fmt.Sprintf("invalid device ordinal %d", dev)}
	}
	return nil
}

func (f *Fake) DeviceInfo(dev int) (Info, error) {
	if err := f.device("device info", dev); err != nil {
		return Info{}, err
	}
	local := dev % f.cl.GPUs
	i := Info{MemBytes: 141 << 30, L2Bytes: 60 << 20, MyPE: -1, Device: int32(local), SMs: 132, ClockKHz: 1980000,
		CCMajor: 9, CCMinor: 0, CUDARuntime: 13000, CUDADriver: 13000, NCCLVersion: 22809}
	v := fakeNVSHMEM()
	i.NVSHMEMMajor, i.NVSHMEMMinor, i.NVSHMEMPatch = int32(v[0]), int32(v[1]), int32(v[2])
	copy(i.Name[:], "Fake H200 (no GPU)")
	copy(i.UUID[:], fmt.Sprintf("GPU-fake-%d-%d", f.cl.NodeOf(dev), local))
	copy(i.PCIBusID[:], fmt.Sprintf("0000:%02x:00.0", 0x10+local))
	copy(i.Host[:len(i.Host)-1], f.cl.Host(dev))
	return i, nil
}

// CanAccessPeer: the GPUs of one node reach each other.
func (f *Fake) CanAccessPeer(dev, peer int) (bool, error) {
	if err := f.device("peer access", dev); err != nil {
		return false, err
	}
	if err := f.device("peer access", peer); err != nil {
		return false, err
	}
	return f.cl.NodeOf(dev) == f.cl.NodeOf(peer), nil
}

func (f *Fake) UniqueID() ([]byte, error) { return append([]byte(nil), FakeUID...), nil }

func (f *Fake) Init(mode, rank, nranks int, uid []byte, device int, heap int64) error {
	if f.inited {
		return &Error{Op: "NVSHMEM init", Status: StatusErr, Msg: "already initialised"}
	}
	if f.clErr != nil {
		return &Error{Op: "NVSHMEM init", Status: StatusErr, Msg: f.clErr.Error()}
	}
	if err := f.device("NVSHMEM init", device); err != nil {
		return err
	}
	if mode == InitUID && string(uid) != string(FakeUID) {
		return &Error{Op: "NVSHMEM init", Status: StatusErr, Msg: "unique id mismatch"}
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return &Error{Op: "NVSHMEM init", Status: StatusErr, Msg: fmt.Sprintf("rank %d of %d", rank, nranks)}
	}
	f.rank, f.nranks, f.dev, f.inited = rank, nranks, device, true
	_, err := f.meet(fmt.Sprintf("init heap=%d", heap), nil)
	return err
}

func (f *Fake) Finalize() error {
	if !f.inited {
		return nil
	}
	_, err := f.meet("finalize", nil)
	f.inited = false
	return err
}

// devOf is PE q's device: as Job exchanged it, else (no fabric to ask)
// where a launcher on this machine puts it, q % the devices.
func (f *Fake) devOf(q int) int {
	switch {
	case q < len(f.devs):
		return f.devs[q]
	case q == f.rank:
		return f.dev
	}
	return q % f.cl.Devices()
}

// pathBetween is how PE p reaches PE q: the cluster's path between their
// devices, or NVSHBENCH_FAKE_PATH's between two PEs.
func (f *Fake) pathBetween(p, q int) int {
	if p == q {
		return PathLocal
	}
	switch os.Getenv("NVSHBENCH_FAKE_PATH") {
	case "p2p":
		return PathP2P
	case "remote":
		return PathRemote
	case "local":
		return PathLocal
	}
	return f.cl.Path(f.devOf(p), f.devOf(q))
}

// pathTo is this PE's path to q.
func (f *Fake) pathTo(q int) int { return f.pathBetween(f.rank, q) }

// Job exchanges the PEs' devices (one collective call, as nb_job's
// exchange) and describes each from its device.
func (f *Fake) Job() (Job, error) {
	if !f.inited {
		return Job{}, &Error{Op: "job facts", Status: StatusErr, Msg: "not initialised"}
	}
	all, err := f.meet("job", binary.LittleEndian.AppendUint64(nil, uint64(f.dev)))
	if err != nil {
		return Job{}, err
	}
	devs := make([]int, f.nranks)
	for q := range devs {
		devs[q] = f.devOf(q)
		if f.fabric != nil && f.nranks > 1 {
			devs[q] = int(binary.LittleEndian.Uint64(all[q]))
		}
	}
	f.devs = devs
	j := Job{PEs: make([]Info, f.nranks), Paths: make([][]int, f.nranks)}
	for p := range j.PEs {
		if j.PEs[p], err = f.DeviceInfo(devs[p]); err != nil {
			return Job{}, err
		}
		j.PEs[p].MyPE, j.PEs[p].NPEs = int32(p), int32(f.nranks)
		j.Paths[p] = make([]int, f.nranks)
		for q := range j.Paths[p] {
			j.Paths[p][q] = f.pathBetween(p, q)
		}
	}
	return j, nil
}

// Gather exchanges every PE's bytes (one collective call).
func (f *Fake) Gather(mine []byte) ([][]byte, error) {
	if !f.inited {
		return nil, &Error{Op: "gather", Status: StatusErr, Msg: "not initialised"}
	}
	return f.meet("gather", mine)
}

func (f *Fake) Agree(v int64) ([]int64, error) {
	if !f.inited {
		return nil, &Error{Op: "agreement", Status: StatusErr, Msg: "not initialised"}
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(v))
	all, err := f.meet("agree", b)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(all))
	for r, p := range all {
		out[r] = int64(binary.LittleEndian.Uint64(p))
	}
	return out, nil
}

// Setenv sets the variable for the fake's own reads.
func (f *Fake) Setenv(name, value string) error { return os.Setenv(name, value) }

// ProbeBootstrap: every plugin loads, except those NVSHBENCH_FAKE_NO_BOOTSTRAP
// names (comma list of plugin file names, matched with or without a
// folder), with the loader's message.
func (f *Fake) ProbeBootstrap(plugin string) error {
	for _, p := range strings.Split(os.Getenv("NVSHBENCH_FAKE_NO_BOOTSTRAP"), ",") {
		if p != "" && (p == plugin || p == filepath.Base(plugin)) {
			return &Error{Op: "loading " + plugin, Status: StatusUnreachable, Msg: plugin + ": undefined symbol: pmix_value_load"}
		}
	}
	return nil
}

// argsKey is a point's arguments as the fabric compares them.
func argsKey(a Args) string {
	h := fnv.New64a()
	h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&a)), unsafe.Sizeof(a)))
	return fmt.Sprintf("run op=%s size=%d %x", a.OpString(), a.Size, h.Sum64())
}

func envInt(k string) int64 {
	v, err := strconv.ParseInt(os.Getenv(k), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// The fake models an operation from its entry in the shim's table (its
// kind, traits and lands), so a new table entry runs here as soon as the
// shim's sources have it; the peak bandwidths below are the model's
// figures for some bulk operations (every other RMA operation moves at 300
// GB/s, counters run at 1 µs per operation over the grid).
var fakePeak = map[string]float64{"rma.get": 140e9, "rma.p": 170e9, "rma.g": 8e9, "rma.st": 400e9, "rma.ld": 300e9,
	"rma.ce_copy": 420e9, "rma.sm_copy": 450e9, "rma.sm_copy_read": 430e9, "rma.lsa_put": 390e9, "rma.lsa_get": 290e9}

// LinkInfo: an H200-like device, PCIe gen 5 x16 and 4.8 TB/s of memory;
// on a node of several GPUs its 18 NVLinks end at the node's NVSwitches
// (none for a GPU the topology makes PCIe-only).
func (f *Fake) LinkInfo(dev int) (Links, error) {
	if err := f.device("link info", dev); err != nil {
		return Links{}, err
	}
	l := Links{PCIeBps: f.cl.PCIeBps, HBMBps: 4.8e12, PCIeGen: 5, PCIeWidth: 16, NVML: 1}
	if f.cl.GPUs > 1 && !f.cl.PCIeOnly[dev] {
		l.Links, l.LinkBps = fakeNVLinks, f.cl.NVLinkBps/fakeNVLinks
		for i := 0; i < fakeNVLinks; i++ {
			copy(l.Remote[i][:], fmt.Sprintf("0000:%02x:00.0", 0xc0+i%4)) // four switches
		}
	}
	return l, nil
}

// Run models the point, then meets the other PEs to sum the verification
// counts, as the shim's last agreement does.
func (f *Fake) Run(a Args) (Timing, Result, error) {
	r := Result{FailedPE: -1}
	name := a.OpString()
	if !f.inited {
		return Timing{}, r, &Error{Op: name, Status: StatusErr, Msg: "not initialised"}
	}
	op, known := LookupOp(name)
	if !known {
		return Timing{}, r, &Error{Op: name, Status: StatusErr, Msg: fmt.Sprintf("unknown operation %q: not in this shim's dispatch table", name)}
	}
	if a.Samples <= 0 || a.Iters < 0 || a.Size <= 0 || a.Threads <= 0 || a.CTAs < 0 || a.CTAs == 0 && !fakePerSMCompute(name) ||
		a.Peer < 0 || int(a.Peer) >= f.nranks || a.Initiator < 0 || int(a.Initiator) >= f.nranks {
		return Timing{}, r, &Error{Op: name, Status: StatusErr, Msg: "bad arguments"}
	}
	if envInt("NVSHBENCH_FAKE_HANG_SIZE") == a.Size {
		time.Sleep(time.Hour)
	}
	if size, ok := f.cl.Die[f.rank]; ok && size == a.Size {
		fmt.Fprintf(os.Stderr, "fake GPU: PE %d dies at a point of %d bytes (NVSHBENCH_FAKE_TOPO die:%d@%d)\n", f.rank, a.Size, f.rank, a.Size)
		os.Exit(3)
	}
	var t Timing
	r.OpsPerIter = 1
	err := atomicTakes(a, op) // as the shim's counter reset, on every PE before anything runs
	if err == nil {
		err = fakeStageOffset(a, op)
	}
	if why := fakeWaiver(name); err == nil && why != "" {
		err = &Error{Op: name, Status: StatusUnreachable, Msg: why}
	}
	switch {
	case err != nil:
	case op.Kind() == "coll":
		t = f.collective(a, op, &r)
	case op.Kind() == "moe":
		t, err = f.moe(a, op, &r)
	case op.Kind() == "lat", op.Kind() == "host":
		t, err = f.latency(a, op, &r)
	default:
		t, err = f.rma(a, op, &r)
	}
	corrupt := envInt("NVSHBENCH_FAKE_CORRUPT_SIZE") == a.Size || a.Corrupt != 0
	switch {
	case a.Verify == 0:
	case op.Atomic && r.Initiator != 0:
		// An atomic's counters (a rate's, one a thread; a round trip's one),
		// the corrupted one of them wrong: counted on the initiator, while
		// the shim checks them at the peer where they land (the job's
		// totals, which the harness records, are the same).
		r.Checked = 1
		if op.Has(TraitCounters) {
			r.Checked = int64(a.CTAs) * int64(a.Threads)
		}
		if corrupt {
			r.Errors = 1
			copy(r.Detail[:], fmt.Sprintf("counter %d: got a damaged value", r.Checked/2))
		}
	case op.Check == "kCheckRegions" && r.Initiator != 0:
		// lat.region moves no bytes: its check is the initiator's count of
		// regions that started and stopped (newer.cuh), one word.
		r.Checked = 1
		if corrupt {
			r.Errors = 1
			copy(r.Detail[:], "word 0: got a damaged count")
		}
	case r.Bytes > 0 || fakePerSMCompute(name): // a compute kernel's results are checked (persm.cuh)
		r.Checked = a.Size
		if corrupt {
			r.Errors = 3
			copy(r.Detail[:], "byte 0: got 0x00, want 0x5a")
		}
	}
	if err == nil && r.Initiator != 0 {
		err = fakeCEValues(a, op, &r) // the shim's end hook gives them, before the check
	}
	st := int64(0) // this PE's status, as the shim's last agreement shares it
	if err != nil {
		st = StatusErr
		if ce, ok := err.(*Error); ok {
			st = int64(ce.Status)
		}
	}
	var pl []byte
	for _, v := range []int64{st, r.Errors, r.Checked, r.Bytes} {
		pl = binary.LittleEndian.AppendUint64(pl, uint64(v))
	}
	all, merr := f.meet(argsKey(a), pl)
	if merr != nil {
		return Timing{}, Result{FailedPE: -1}, merr
	}
	for q, p := range all {
		switch qst := int64(binary.LittleEndian.Uint64(p)); {
		case qst == 0 || err != nil:
		case qst == StatusUnreachable:
			err = &Error{Op: name, Status: StatusUnreachable, Msg: fmt.Sprintf("PE %d: not reachable by load/store", q)}
		default:
			err = &Error{Op: name, Status: int(qst), Msg: fmt.Sprintf("PE %d failed the point", q)}
		}
		r.JobErrors += int64(binary.LittleEndian.Uint64(p[8:]))
		r.JobChecked += int64(binary.LittleEndian.Uint64(p[16:]))
		r.JobBytes += int64(binary.LittleEndian.Uint64(p[24:]))
	}
	if err != nil {
		return Timing{}, Result{FailedPE: -1}, err
	}
	r.NSamples, r.NKernel = int64(len(t.Samples)), int64(len(t.Kernel))
	return t, r, nil
}

// fakeNVSHMEM is the fake's NVSHMEM version: NVSHBENCH_FAKE_NVSHMEM
// (major.minor.patch), else the pinned 3.4.5.
func fakeNVSHMEM() [3]int {
	v := [3]int{3, 4, 5}
	if s := os.Getenv("NVSHBENCH_FAKE_NVSHMEM"); s != "" {
		var w [3]int
		if n, err := fmt.Sscanf(s, "%d.%d.%d", &w[0], &w[1], &w[2]); err == nil && n == 3 {
			v = w
		}
	}
	return v
}

// fakeNewer: the operations the shim compiles only where NVSHMEM's headers
// have them (newer.cuh), and what its validate says where they do not, for
// the fake's NVSHMEM version: the same waivers, so a fake run lists them.
var fakeNewer = map[string]func(v [3]int) string{
	"rma.put_tma":              fakeNeeds(3, 7, "nvshmemx_give_smem, NVSHMEM_TMA_POLICY"),
	"rma.get_tma":              fakeNeeds(3, 7, "nvshmemx_give_smem, NVSHMEM_TMA_POLICY"),
	"lat.flush":                fakeNeeds(3, 7, "nvshmemx_flush"),
	"rma.rate_put_region":      fakeNeeds(3, 8, "nvshmemx_region_start_block"),
	"rma.rate_put_region_none": fakeNeeds(3, 8, "nvshmemx_region_start_block"),
	"lat.region":               fakeNeeds(3, 8, "nvshmemx_region_start_block"),
	// No NVSHMEM the fake stands for is built with CFT handles.
	"rma.put_signal_counted": func(v [3]int) string {
		return fmt.Sprintf("needs NVSHMEM >= 3.8 built with NVSHMEM_CFT_HANDLES_SUPPORT (nvshmemx_putmem_signal_counted_nbi_block is declared only "+
			"there; the PyPI 3.8.0 wheel is built without it): this shim was built against NVSHMEM %d.%d without it", v[0], v[1])
	},
}

// fakeNeeds waives, as newer.cuh's needs_nvshmem does, below major.minor.
func fakeNeeds(major, minor int, what string) func(v [3]int) string {
	return func(v [3]int) string {
		if v[0] > major || v[0] == major && v[1] >= minor {
			return ""
		}
		return fmt.Sprintf("needs NVSHMEM >= %d.%d (%s): this shim was built against NVSHMEM %d.%d", major, minor, what, v[0], v[1])
	}
}

// fakeWaiver is why the fake's NVSHMEM cannot run op ("" where it can).
func fakeWaiver(op string) string {
	if w, ok := fakeNewer[op]; ok {
		return w(fakeNVSHMEM())
	}
	return ""
}

// atomicTakes refuses, as the shim's counter reset does, an atomic whose
// calls the fake's NVSHMEM lacks (waived: "needs NVSHMEM >= 3.7") or whose
// counters are of a size it does not take.
func atomicTakes(a Args, op Op) error {
	if !op.Atomic {
		return nil
	}
	v := fakeNVSHMEM()
	if op.NeedsNVSHMEM != "" {
		var major, minor int
		fmt.Sscanf(op.NeedsNVSHMEM, "%d.%d", &major, &minor)
		if why := fakeNeeds(major, minor, op.Calls)(v); why != "" { // the shim's needs_nvshmem_37(has, calls)
			return &Error{Op: op.Name, Status: StatusUnreachable, Msg: why}
		}
	}
	var takes []string
	for _, c := range op.Counters {
		if int32(c.Bytes) == a.Elem {
			return nil
		}
		takes = append(takes, c.DType)
	}
	return &Error{Op: op.Name, Status: StatusErr, Msg: fmt.Sprintf("atomic counters of %d bytes: this atomic takes %s", a.Elem, strings.Join(takes, " "))}
}

// reachable refuses, as the shim does, an operation that needs a load/store
// mapping towards a PE this one reaches only remotely, or a network this
// machine lacks.
func (f *Fake) reachable(op Op, target int) error {
	if op.Has(TraitNetwork) {
		// As the shim on a machine without a GIN-capable network: NCCL
		// refuses the device communicator's GIN resources on every rank.
		return &Error{Op: op.Name, Status: StatusUnreachable, Msg: "ncclDevCommCreate with GIN resources: the fake GPU has no network"}
	}
	if op.Has(TraitLoadStore) && f.pathTo(target) == PathRemote {
		return &Error{Op: op.Name, Status: StatusUnreachable, Msg: fmt.Sprintf("PE %d is not reachable by load/store (no P2P mapping)", target)}
	}
	return nil
}

func (f *Fake) rma(a Args, op Op, r *Result) (Timing, error) {
	from, to := initiatorOf(a), int(a.Peer)
	incast := op.Name == "rma.put_incast" // every PE but the target sends to it
	initiator := f.rank == from || (a.Bidir != 0 && f.rank == to) || (incast && f.rank != to)
	target := to
	if f.rank != from && !incast {
		target = from
	}
	if err := f.reachable(op, target); err != nil && (initiator || op.Has(TraitNetwork)) {
		return Timing{}, err
	}
	r.WorkSet = a.Size
	r.Iters = a.Iters
	if r.Iters == 0 {
		r.Iters = 10
	}
	counters := op.Has(TraitCounters) || op.Has(TraitMessages)
	word := int64(8) // a message's, a signal word's, a counter's bytes (an atomic's Args.Elem, as the shim counts them)
	if op.Atomic {
		word = int64(a.Elem)
	}
	switch {
	case op.Has(TraitCounters):
		r.OpsPerIter = a.CTAs * a.Threads
		r.WorkSet = int64(r.OpsPerIter) * word
	case op.Has(TraitMessages):
		r.OpsPerIter = scopeGroups(a)
		r.WorkSet = int64(r.OpsPerIter) * 8
	}
	if !initiator {
		return Timing{}, nil
	}
	r.Initiator = 1
	r.Bytes = word
	if op.Has(TraitPayload) {
		r.Bytes = a.Size
	} else if fakePerSMCompute(op.Name) {
		r.Bytes = 0
	}
	// One operation's time (the same for every sample, which varies it by
	// its index below): the operation's own rate on this GPU's clock (the
	// copy engine's is not the SMs'), within the path's.
	me, there := f.devOf(f.rank), f.devOf(target)
	clock := f.cl.ClockOf(me)
	if op.Has(TraitHost) {
		clock = 1
	}
	var t float64
	if counters {
		t = 1e-6 / float64(r.OpsPerIter) * f.cl.LatencyBase(me, there) / 1.2e-6 / clock
	} else if pt, ok := fakePerSM(a, op); ok {
		t = pt / clock
	} else {
		peak, ok := fakePeak[op.Name]
		if !ok {
			peak = 300e9
		}
		bw := min(peak*clock, f.cl.PathBps(me, there))
		if incast {
			bw = min(bw, f.incastShare(me, to))
		}
		t = float64(a.Size) / (bw * float64(a.Size) / (float64(a.Size) + 64<<10))
	}
	samples := make([]float64, a.Samples)
	for i := range samples {
		samples[i] = t * (1 + 0.001*float64((i+f.rank)%5))
	}
	tm := Timing{Samples: samples}
	if !op.Has(TraitHost) { // the copy engine has no kernel of ours to stamp; the others stamp their loop
		tm.Kernel = stampsOf(samples, 1, a)
	}
	return tm, nil
}

// incastShare is a sender's share of an incast's target: the senders on
// the target's node share its NVLink ports, the others its NIC (at its
// node's and its own share).
func (f *Fake) incastShare(me, targetPE int) float64 {
	target := f.devOf(targetPE)
	near, far := 0, 0
	for q := 0; q < f.nranks; q++ {
		switch {
		case q == targetPE:
		case f.cl.NodeOf(f.devOf(q)) == f.cl.NodeOf(target):
			near++
		default:
			far++
		}
	}
	if f.cl.NodeOf(me) == f.cl.NodeOf(target) {
		return f.cl.NVLinkBps / float64(max(near, 1))
	}
	return f.cl.NICBps * shareOf(f.cl.NIC, target) * shareOf(f.cl.NodeNIC, f.cl.NodeOf(target)) / float64(max(far, 1))
}

// initiatorOf is the PE that issues a point-to-point operation.
func initiatorOf(a Args) int { return int(a.Initiator) }

// latency models round trips of the path's fixed time (LatencyBase: 1.2 µs
// over NVLink, on the initiator's clock) plus the bytes at 10 GB/s or the
// path's rate where lower (ping-pongs twice that), floors of 0.6 µs
// (memory-served) and 0.25 µs (cache-served); the in-kernel timer agrees
// with the events within 2 %.
func (f *Fake) latency(a Args, op Op, r *Result) (Timing, error) {
	from, to := initiatorOf(a), int(a.Peer)
	if err := f.reachable(op, to); err != nil && f.rank == from {
		return Timing{}, err
	}
	r.Iters = a.Iters
	if r.Iters == 0 {
		r.Iters = 100
	}
	r.WorkSet = a.Size
	if op.Has(TraitChase) {
		r.WorkSet = 256 << 20 // the chain
		if a.Extent > 0 {
			r.WorkSet = a.Extent
		}
	}
	if f.rank != from {
		return Timing{}, nil
	}
	r.Initiator = 1
	me, there := f.devOf(from), f.devOf(to)
	t := f.cl.LatencyBase(me, there)/f.cl.ClockOf(me) + float64(a.Size)/min(10e9, f.cl.PathBps(me, there))
	switch {
	case op.Has(TraitFloor) && a.Extent > 0:
		t = 0.25e-6
	case op.Has(TraitFloor):
		t = 0.6e-6
	case strings.HasPrefix(op.Name, "lat.pp_"):
		t *= 2
	}
	var tm Timing
	for i := 0; i < int(a.Samples); i++ {
		tm.Samples = append(tm.Samples, t*(1+0.01*float64(i%7)))
	}
	if !op.Has(TraitNoOutput) && !op.Has(TraitHost) { // the empty kernel keeps no in-kernel time, host calls none
		for i := 0; i < int(a.Samples)*int(r.Iters) && i < maxKernelSamples; i++ {
			tm.Kernel = append(tm.Kernel, t*(0.98+0.001*float64(i%11)))
		}
	}
	if op.Has(TraitPayload) {
		r.Bytes = a.Size
	}
	return tm, nil
}

// stampsOf models the in-kernel timer of a kernel of ours whose grid is
// co-resident (at most 2048 threads on each of 132 SMs): periods within 2 %
// of the events samples, periods a sample as the shim gives (one for a
// fused launch, which stamps its loop; one an operation for a launch per
// operation).
func stampsOf(samples []float64, periods int32, a Args) []float64 {
	if int64(a.CTAs)*int64(a.Threads) > 132*2048 {
		return nil
	}
	var k []float64
	for _, s := range samples {
		for i := 0; i < int(periods) && len(k) < maxKernelSamples; i++ {
			k = append(k, s*(0.985+0.003*float64(i%7)))
		}
	}
	return k
}

// everyPE models an operation every PE runs and times (a collective, a
// MoE step): an iteration moves its bytes at bw, within the slowest path
// between two GPUs of the job, after base; this PE does its part on its
// GPU's clock once every PE has arrived, so its time is its own part plus
// how much later than it the last PE arrived (a late PE's own time is the
// shortest: the others waited for it).
func (f *Fake) everyPE(a Args, base, bw float64) []float64 {
	late := 0.0
	for q := 0; q < f.nranks; q++ {
		late = max(late, f.cl.Late[q])
		for p := q + 1; p < f.nranks; p++ {
			bw = min(bw, f.cl.PathBps(f.devOf(p), f.devOf(q)))
		}
	}
	t := (base+float64(a.Size)/bw)/f.cl.ClockOf(f.devOf(f.rank)) + late - f.cl.Late[f.rank]
	samples := make([]float64, a.Samples)
	for i := range samples {
		samples[i] = t * (1 + 0.002*float64((i+f.rank)%3))
	}
	return samples
}

// moe models a dispatch or combine as 6 µs plus rank 0's selected bytes
// (args.size) at 300 GB/s; NCCL from the host pays 20 µs of launches more.
func (f *Fake) moe(a Args, op Op, r *Result) (Timing, error) {
	if a.Experts <= 0 || a.Tokens <= 0 || a.TopK <= 0 || int(a.Experts)%f.nranks != 0 || a.TopK > a.Experts {
		return Timing{}, &Error{Op: op.Name, Status: StatusErr, Msg: "MoE: bad workload"}
	}
	base := 6e-6
	if a.Impl == ImplNCCL {
		base += 20e-6
	}
	samples := f.everyPE(a, base, 300e9)
	r.Iters, r.Initiator, r.WorkSet = 10, 1, a.Size
	if f.rank == 0 {
		r.Bytes = a.Size
	}
	t := Timing{Samples: samples}
	if a.Impl != ImplNCCL { // the device kernels stamp, a launch an operation; NCCL's host calls do not
		t.Kernel = stampsOf(samples, r.Iters, a)
	}
	return t, nil
}

// collective models 4 µs plus size at 25 GB/s (NCCL and ours at 200 GB/s);
// a fused device collective saves its 3 µs launch per operation.
func (f *Fake) collective(a Args, op Op, r *Result) Timing {
	bw := 25e9
	if a.Impl == ImplNCCL || a.Impl == ImplNCCLCE || a.Impl == ImplOurOneShot || a.Impl == ImplOurTwoShot || a.Impl == ImplLSAOneShot || a.Impl == ImplLSATwoShot {
		bw = 200e9
	}
	base := 4e-6
	if a.PerOp == 0 {
		base = 1e-6
	}
	samples := f.everyPE(a, base, bw)
	r.Iters, r.Initiator, r.WorkSet = 10, 1, a.Size
	if op.Has(TraitPayload) {
		r.Bytes = a.Size
	}
	t := Timing{Samples: samples}
	if a.Impl != ImplNCCL && a.Impl != ImplNCCLCE && a.Impl != ImplNVSHMEMStream { // the device kernels stamp; the host APIs do not
		periods := int32(1) // a fused launch: its loop
		if a.PerOp != 0 {
			periods = r.Iters
		}
		t.Kernel = stampsOf(samples, periods, a)
	}
	return t
}

// scopeGroups is the shim's scope_groups: a launch's CTAs, warps or threads.
func scopeGroups(a Args) int32 {
	switch a.Scope {
	case ScopeBlock:
		return a.CTAs
	case ScopeWarp:
		return a.CTAs * (a.Threads / 32)
	}
	return a.CTAs * a.Threads
}

// fakePerSMCompute: a bytes-per-SM compute kernel, which moves no bytes
// (persm.cuh's pm_bytes) and takes 0 CTAs, on every SM (no transfer
// budget), as pm_validate does.
func fakePerSMCompute(op string) bool {
	_, ok := fakePerSMKind(op, 0)
	return ok
}

// fakePerSMKind finds a bytes-per-SM mechanism or compute kernel of the
// shim's lists by its entry's name (code 0) or by its code (op ""): the
// mechanism (nil for a compute kernel), and whether either is.
func fakePerSMKind(op string, code int) (*shim.PerSMMechanism, bool) {
	for _, m := range shim.PerSMMechanisms() {
		if m.Op == op || code != 0 && m.Code == code {
			return &m, true
		}
	}
	for _, c := range shim.PerSMComputes() {
		if c.Op == op || code != 0 && c.Code == code {
			return nil, true
		}
	}
	return nil, false
}

// fakeNoSM: a mechanism of no SM of ours (the copy engine's).
func fakeNoSM(m *shim.PerSMMechanism) bool { return m != nil && !m.SMs }

// fakeCEValues gives a copy-engine point the shim's values (persm.cuh's
// pm_end; nothing where not such a point): the SM check's answer on every
// point of the copy engine alone or beside a compute kernel and of a
// compute kernel it feeds (a copy ran while a kernel held every CTA slot;
// with NVSHBENCH_FAKE_CE_ON_SM=1 it waited), then a fed compute's
// (fakeFedValues). NVSHBENCH_FAKE_BAD_VALUE adds one the readers refuse.
func fakeCEValues(a Args, op Op, r *Result) error {
	self, _ := fakePerSMKind(op.Name, 0)
	partner, _ := fakePerSMKind("", int(a.Impl))
	if !fakeNoSM(self) && !(fakePerSMCompute(op.Name) && fakeNoSM(partner)) {
		return nil
	}
	if err := fakeFedValues(a, op, r); err != nil {
		return err
	}
	free := 1.0
	if envInt("NVSHBENCH_FAKE_CE_ON_SM") == 1 {
		free = 0
	}
	if os.Getenv("NVSHBENCH_FAKE_BAD_VALUE") == "range" {
		free = 2
	}
	if err := r.PutValue("ce_sm_free", "1", free); err != nil {
		return &Error{Op: op.Name, Status: StatusErr, Msg: err.Error()}
	}
	var err error
	switch os.Getenv("NVSHBENCH_FAKE_BAD_VALUE") {
	case "unknown":
		err = r.PutValue("ce_idle", "1", 0.5)
	case "unit":
		err = r.PutValue("ce_busy", "%", 99.5)
	case "many":
		for i := 0; err == nil; i++ {
			err = r.PutValue(fmt.Sprintf("ce_extra_%d", i), "1", 1)
		}
	}
	if err != nil {
		return &Error{Op: op.Name, Status: StatusErr, Msg: err.Error()}
	}
	return nil
}

// fakeFedValues gives a compute kernel fed copies by the copy engine
// beside it (pm_feed.cuh's pm_end_fed; nothing where not such a row) the
// fake's copy engine busy 99.5 % of every window, moving fakePerSM's rate
// of the copy engine beside a compute kernel, its feeder's calls 2 µs a
// copy. The shim judges a launch under 90 % busy only where a copy takes
// twice the feeder's calls (PM_FEED_HEADROOM); the fake's copy engine is
// busy 99.5 % unless its copy is shorter than the feeder's calls, where
// the share would be about copy / calls: under 90 % below 0.9 of them, and
// then not judged: the two times only.
func fakeFedValues(a Args, op Op, r *Result) error {
	m, _ := fakePerSMKind("", int(a.Impl))
	if !fakePerSMCompute(op.Name) || !fakeNoSM(m) {
		return nil
	}
	copies, _ := LookupOp(m.Op)
	b := a
	b.Impl = int32(op.Value)
	t, _ := fakePerSM(b, copies)
	const feed = 2e-6
	type value struct {
		name, unit string
		v          float64
	}
	var vals []value
	if feed*0.9 <= t {
		vals = append(vals, value{"ce_busy", "1", 0.995}, value{"ce_bytes_per_s", "B/s", float64(a.Size) / t})
	}
	vals = append(vals, value{"ce_copy_s", "s", t}, value{"ce_feed_s", "s", feed})
	for _, v := range vals {
		if err := r.PutValue(v.name, v.unit, v.v); err != nil {
			return &Error{Op: op.Name, Status: StatusErr, Msg: err.Error()}
		}
	}
	return nil
}

// fakeStageOffset refuses, as the shim's pm_validate_offset does, a stage
// offset on a point whose timed transfer stages nothing in shared memory,
// or one off 16-byte steps or past the slack (128 bytes).
func fakeStageOffset(a Args, op Op) error {
	if a.StageOffset == 0 {
		return nil
	}
	if m, _ := fakePerSMKind(op.Name, 0); m == nil || !m.Staged {
		return &Error{Op: op.Name, Status: StatusErr, Msg: fmt.Sprintf("a stage offset (%d bytes) is a staged transfer's (TMA): this point stages nothing in shared memory", a.StageOffset)}
	}
	if a.StageOffset < 0 || a.StageOffset >= 128 || a.StageOffset%16 != 0 {
		return &Error{Op: op.Name, Status: StatusErr, Msg: fmt.Sprintf("a stage offset of %d bytes: 0 to 112 in steps of 16", a.StageOffset)}
	}
	return nil
}

// fakePerSM models the bytes-per-SM rows (persm.cuh): a mechanism's GB/s
// grows with its SMs up to its peak (GB/s an SM, peak, the size at half
// its peak; a mechanism without a model of its own as st's); one with no
// SM of ours (the copy engine) uses none and needs large transfers. A
// staged mechanism runs at full rate with its stages on a 128-byte line,
// at 0.84 of it on another 32-byte multiple and at half off one (as
// persm/tma/stage-offset measures it: docs/bytes-per-sm.md). A
// compute kernel's iteration takes 4 µs (fma; another without a model as
// fma's) or 9 µs (mma) on the SMs outside the budget (every SM at budget
// 0), scaled to 132 SMs. Beside each other, the transfer loses 10 % and
// the compute 5 % (mma 15 % beside SM stores); the copy engine, on no SM,
// loses 2 % beside a compute kernel on every SM and costs it 1 %. ok
// false: not such a row.
func fakePerSM(a Args, op Op) (float64, bool) {
	type model struct{ perSM, peak, half float64 }
	models := map[string]model{
		"rma.pm_st": {48e9, 1980e9, 64 << 10}, "rma.pm_tma": {50e9, 1920e9, 16 << 10}, "rma.pm_put": {20e9, 1800e9, 256 << 10},
		"rma.pm_st1": {20e9, 1900e9, 64 << 10}, "rma.pm_lsa": {48e9, 1950e9, 64 << 10}, "rma.pm_ce": {0, 2100e9, 32 << 20},
	}
	self, known := fakePerSMKind(op.Name, 0)
	if !known {
		return 0, false
	}
	partner, beside := "", false
	if pm, ok := fakePerSMKind("", int(a.Impl)); ok && a.Impl != 0 {
		beside = true
		if pm != nil {
			partner = pm.Op
		}
	}
	if self != nil {
		m, ok := models[op.Name]
		switch {
		case ok:
		case self.SMs:
			m = models["rma.pm_st"]
		default:
			m = models["rma.pm_ce"]
		}
		bw := m.peak
		if m.perSM > 0 {
			bw = min(m.peak, m.perSM*float64(a.CTAs))
		}
		bw *= float64(a.Size) / (float64(a.Size) + m.half)
		switch {
		case beside && !self.SMs:
			bw *= 0.98
		case beside:
			bw *= 0.9
		}
		switch {
		case a.StageOffset%32 != 0:
			bw /= 2
		case a.StageOffset%128 != 0:
			bw *= 0.84
		}
		return float64(a.Size) / bw, true
	}
	it, ok := map[string]float64{"rma.pm_fma": 4e-6, "rma.pm_mma": 9e-6}[op.Name]
	if !ok {
		it = 4e-6
	}
	left := max(132-float64(a.CTAs), 1)
	t := it * 131 / left
	pm, _ := fakePerSMKind(partner, 0)
	switch {
	case partner == "rma.pm_st" && op.Name == "rma.pm_mma":
		t *= 1.15
	case fakeNoSM(pm):
		t *= 1.01
	case partner != "":
		t *= 1.05
	}
	return t, true
}
