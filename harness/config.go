package harness

import (
	"fmt"
	"slices"
	"strconv"
)

// Config is the sweep configuration shared by every benchmark of a run.
type Config struct {
	Sizes       []int64 `json:"sizes"`
	CTAs        int     `json:"ctas"`
	Threads     int     `json:"threads"`
	LaunchSweep bool    `json:"launch_sweep"` // also sweep CTAs × threads at SweepSize
	SweepSize   int64   `json:"sweep_size"`
	Path        string  `json:"path"`    // p2p, proxy, ibgda (the run's requested path)
	Iters       int     `json:"iters"`   // operations per timed launch; 0: calibrated to about 20 ms
	Warmup      int     `json:"warmup"`  // untimed launches
	Samples     int     `json:"samples"` // timed launches per point
	Verify      bool    `json:"verify"`
	// CorruptChecks hands every check damaged output (one element of what
	// it reads), which it must then report: the GPU test's proof that each
	// check can fail. Never for measurements (run's hidden --corrupt-checks).
	CorruptChecks bool `json:"corrupt_checks,omitempty"`
	Bidir         bool `json:"bidir"`
	Blocking      bool `json:"blocking"` // also the blocking forms of put/get
	PEs           int  `json:"pes"`
	// Pair is the pair of PEs every point-to-point point measures
	// ("FROM:TO", --pair; "": the one its path chooses).
	Pair string `json:"pair,omitempty"`
	// Matrix: the point-to-point rows of the pair matrix (MatrixRows) are
	// measured for every ordered pair of PEs at MatrixSize (check's plan).
	Matrix     bool     `json:"matrix,omitempty"`
	MatrixSize int64    `json:"matrix_size,omitempty"`
	LimitSize  int64    `json:"limit_size"` // size of the in-run limit measurements
	Quick      bool     `json:"quick"`
	DTypes     []string `json:"dtypes,omitempty"`      // collectives: float, bf16, half
	Graph      bool     `json:"graph,omitempty"`       // collectives: capture the timed iterations in a CUDA graph
	NCCLProtos []string `json:"nccl_protos,omitempty"` // NCCL protocols to force (LL, LL128, Simple); none: NCCL's choice
	// NVSHMEMAlgos are NVSHMEM's collective algorithms to force beside its
	// own choice (--nvshmem-algos: collective:name, a collective, or all;
	// NVSHMEMAlgos lists them): extra points of the nvshmem-block rows,
	// each run under its variable (params.env).
	NVSHMEMAlgos []string `json:"nvshmem_algos,omitempty"`
	// SMs is the SM count of the run's GPUs (the smallest), from the
	// devices: full-GPU launches (limits, multi-CTA AllReduces) size their
	// grids by it. 0: unknown (a plan made without a GPU).
	SMs int `json:"sms,omitempty"`
	// SMBudgets are the SM budgets of the bytes-per-SM rows (persm/*): CTAs
	// of one SM each; 0 is every SM of the GPU (Budgets resolves it).
	SMBudgets []int `json:"sm_budgets,omitempty"`
	// MoE is the MoE suite's workload.
	MoE MoEConfig `json:"moe"`
	// NeedBytes is the most any planned point needs of each PE buffer
	// beyond its size (BuildPlan asks the benchmarks: MoE's receive slots).
	NeedBytes int64 `json:"need_bytes,omitempty"`
}

// MoEConfig is the MoE workload (DeepEP's defaults).
type MoEConfig struct {
	Tokens   []int    `json:"tokens"`   // tokens per rank
	Hidden   int      `json:"hidden"`   // elements of a token
	TopK     int      `json:"topk"`     // experts per token
	Experts  int      `json:"experts"`  // over all PEs
	DTypes   []string `json:"dtypes"`   // bf16, fp8 (the dispatched tokens)
	Modes    []string `json:"modes"`    // ll, normal
	Routings []string `json:"routings"` // uniform, skewed
	Zipf     float64  `json:"zipf"`     // the skewed routing's exponent
}

// DefaultMoE: DeepEP's workload (hidden 7168, top-8 of 256 experts).
func DefaultMoE() MoEConfig {
	return MoEConfig{Tokens: []int{128, 256, 512, 1024, 2048, 4096}, Hidden: 7168, TopK: 8, Experts: 256,
		DTypes: []string{"bf16"}, Modes: []string{"ll", "normal"}, Routings: []string{"uniform", "skewed"}, Zipf: 1.2}
}

// Validate checks the MoE workload's flags.
func (m *MoEConfig) Validate() error {
	for _, t := range m.Tokens {
		if t <= 0 {
			return fmt.Errorf("--moe-tokens %d: must be positive", t)
		}
		if t > 1<<20 {
			return fmt.Errorf("--moe-tokens %d: at most %d per rank", t, 1<<20)
		}
	}
	switch {
	case len(m.Tokens) == 0:
		return fmt.Errorf("--moe-tokens: no token count")
	case m.Hidden <= 0 || m.Hidden > 1<<20:
		return fmt.Errorf("--moe-hidden %d: want 1..%d", m.Hidden, 1<<20)
	case m.Experts <= 0 || m.Experts > 4096:
		return fmt.Errorf("--moe-experts %d: want 1..4096", m.Experts)
	case m.TopK <= 0 || m.TopK > 8:
		return fmt.Errorf("--moe-topk %d: want 1..8", m.TopK)
	case m.TopK > m.Experts:
		return fmt.Errorf("--moe-topk %d: more than the %d experts", m.TopK, m.Experts)
	case !(m.Zipf > 0 && m.Zipf <= 8): // NaN too
		return fmt.Errorf("--moe-zipf %v: want an exponent in (0, 8]", m.Zipf)
	}
	for _, d := range m.DTypes {
		if d != "bf16" && d != "fp8" {
			return fmt.Errorf("--moe-dtype %q: want bf16 or fp8", d)
		}
		if d == "fp8" && m.Hidden%128 != 0 {
			return fmt.Errorf("--moe-hidden %d: fp8 tokens need a multiple of 128 (a scale per 128 values)", m.Hidden)
		}
	}
	for _, d := range m.Modes {
		if d != "ll" && d != "normal" {
			return fmt.Errorf("--moe-modes %q: want ll or normal", d)
		}
	}
	for _, d := range m.Routings {
		if d != "uniform" && d != "skewed" {
			return fmt.Errorf("--moe-routing %q: want uniform or skewed", d)
		}
	}
	return nil
}

// Dedupe drops every list's repeated values, keeping the first of each in
// order, as ParseSizes does for sizes: a value listed twice (--dtypes
// float,float, --moe-tokens 128,128) is measured once, and asks for what
// the single value asks for.
func (c *Config) Dedupe() {
	c.Sizes = unique(c.Sizes)
	c.DTypes = unique(c.DTypes)
	c.SMBudgets = unique(c.SMBudgets)
	c.NCCLProtos = unique(c.NCCLProtos)
	c.NVSHMEMAlgos = unique(c.NVSHMEMAlgos)
	c.MoE.Tokens = unique(c.MoE.Tokens)
	c.MoE.DTypes = unique(c.MoE.DTypes)
	c.MoE.Modes = unique(c.MoE.Modes)
	c.MoE.Routings = unique(c.MoE.Routings)
}

func unique[T comparable](items []T) []T {
	if items == nil {
		return nil
	}
	seen := map[T]bool{}
	out := items[:0:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// GridSMs is SMs, or 132 (an H100/H200) when the run did not say.
func (c *Config) GridSMs() int {
	if c.SMs > 0 {
		return c.SMs
	}
	return 132
}

// MaxIters is the most operations one timed launch may loop.
const MaxIters = 1000

// Paper defaults: 32 CTAs × 256 threads (the paper's launch for device RMA).
const (
	DefaultCTAs    = 32
	DefaultThreads = 256
)

// DefaultConfig returns the paper's settings over 8 B … 1 GiB.
func DefaultConfig() Config {
	return Config{
		Sizes: Pow2Sizes(8, 1<<30), CTAs: DefaultCTAs, Threads: DefaultThreads,
		SweepSize: 256 << 20, Path: "p2p", Warmup: 2, Samples: 10, Verify: true,
		LimitSize: 1 << 30, DTypes: []string{"float"}, MoE: DefaultMoE(), SMBudgets: DefaultSMBudgets(),
	}
}

// DefaultSMBudgets are the bytes-per-SM budgets: 1 to 32 SMs by doubling,
// half an H200 (66) and every SM (0).
func DefaultSMBudgets() []int { return []int{1, 2, 4, 8, 16, 32, 66, 0} }

// MaxSMBudget is the largest budget (the shim's NB_MAX_CTAS).
const MaxSMBudget = 1024

// ParseSMBudgets reads --sm-budgets: counts of SMs (1..MaxSMBudget) or
// "all" (0: every SM of the GPU).
func ParseSMBudgets(vals []string) ([]int, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("--sm-budgets: no budget")
	}
	var out []int
	for _, v := range vals {
		if v == "all" {
			out = append(out, 0)
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxSMBudget {
			return nil, fmt.Errorf("--sm-budgets %q: want a count of SMs (1..%d) or all", v, MaxSMBudget)
		}
		out = append(out, n)
	}
	return out, nil
}

// Budgets are the SM budgets resolved on the run's GPUs, ascending, each
// once: "all" becomes GridSMs, and a budget larger than the run's GPUs
// (where known) is left out: a default one (66 on a smaller GPU) has no
// meaning there, and CheckSMBudgets refuses one a user asked for.
func (c *Config) Budgets() []int {
	var out []int
	for _, b := range c.SMBudgets {
		if b == 0 {
			b = c.GridSMs()
		}
		if (c.SMs <= 0 || b <= c.SMs) && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}

// CheckSMBudgets refuses a budget larger than the run's GPUs (SMs known).
func (c *Config) CheckSMBudgets() error {
	for _, b := range c.SMBudgets {
		if c.SMs > 0 && b > c.SMs {
			return fmt.Errorf("--sm-budgets %d: more than the %d SMs of the GPU", b, c.SMs)
		}
	}
	return nil
}

// MaxSize is the largest buffer the run needs per PE.
func (c *Config) MaxSize() int64 {
	m := c.LimitSize
	for _, s := range c.Sizes {
		if s > m {
			m = s
		}
	}
	if c.LaunchSweep && c.SweepSize > m {
		m = c.SweepSize
	}
	return max(m, c.NeedBytes)
}

// Validate checks the configuration.
// MaxSamples and MaxWarmup bound --samples and --warmup: beyond them a
// sweep runs for days, which is a typo, not a plan.
const (
	MaxSamples = 10000
	MaxWarmup  = 1000
)

func (c *Config) Validate() error {
	if len(c.Sizes) == 0 {
		return fmt.Errorf("no message sizes")
	}
	for _, s := range c.Sizes {
		if s <= 0 {
			return fmt.Errorf("message size %d: sizes must be positive", s)
		}
	}
	switch {
	case c.CTAs <= 0:
		return fmt.Errorf("--ctas %d: must be positive", c.CTAs)
	case c.Threads <= 0 || c.Threads > 1024 || c.Threads%32 != 0:
		return fmt.Errorf("--threads %d: must be a multiple of 32 between 32 and 1024", c.Threads)
	case c.Samples <= 0 || c.Samples > MaxSamples:
		return fmt.Errorf("--samples %d: want 1..%d timed launches per point", c.Samples, MaxSamples)
	case c.Warmup < 0 || c.Warmup > MaxWarmup:
		return fmt.Errorf("--warmup %d: want 0..%d untimed launches", c.Warmup, MaxWarmup)
	case c.Iters < 0 || c.Iters > MaxIters:
		return fmt.Errorf("--iters %d: want 1..%d operations per timed launch, or 0 (calibrated)", c.Iters, MaxIters)
	}
	for _, b := range c.SMBudgets {
		if b < 0 || b > MaxSMBudget {
			return fmt.Errorf("--sm-budgets %d: want a count of SMs (1..%d) or all", b, MaxSMBudget)
		}
	}
	for _, d := range c.DTypes {
		if d != "float" && d != "bf16" && d != "half" {
			return fmt.Errorf("--dtypes %q: want float, bf16 or half", d)
		}
	}
	for _, p := range c.NCCLProtos {
		if p != "LL" && p != "LL128" && p != "Simple" {
			return fmt.Errorf("--nccl-protos %q: want LL, LL128 or Simple", p)
		}
	}
	if err := c.validateAlgos(); err != nil {
		return err
	}
	switch c.Path {
	case "p2p", "proxy", "ibgda":
	default:
		return fmt.Errorf("--path %q: want p2p, proxy or ibgda", c.Path)
	}
	return c.MoE.Validate()
}

// Pow2Sizes lists the powers of two from lo to hi.
func Pow2Sizes(lo, hi int64) []int64 {
	var out []int64
	for s := lo; s <= hi && s > 0; s *= 2 {
		out = append(out, s)
	}
	return out
}
