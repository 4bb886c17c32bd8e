package harness

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/record"
)

// A point's own environment (record.Params.Env): NVSHMEM variables that
// NVSHMEM reads once, at nvshmem_init (its forced collective algorithms,
// its TMA policy), so a point that needs one runs in workers started with
// it. BuildPlan puts the points of one environment together (the run's own
// first, where the limits are); the controller starts a worker group for
// each environment, every PE with the same variables; a worker runs a point
// only where its environment holds the point's (RunPoint waives it on
// every PE otherwise: under srun / mpirun one process per PE runs the
// whole plan in the job's environment).

var envName = regexp.MustCompile(`^NVSHMEM_[A-Z0-9_]+$`)

// ValidateEnv checks a point's environment: NVSHMEM_ names, values set and
// printable.
func ValidateEnv(env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		if !envName.MatchString(k) {
			return fmt.Errorf("point environment: %q is not an NVSHMEM variable (NVSHMEM_ and capitals, digits, _)", k)
		}
		if v == "" {
			return fmt.Errorf("point environment: %s has no value", k)
		}
		if c := record.ControlIn(v); c != "" {
			return fmt.Errorf("point environment: %s's value holds a control character (%s)", k, c)
		}
	}
	return nil
}

// EnvKey is a canonical string of an environment ("" for none): K=V
// pairs in name order.
func EnvKey(env map[string]string) string { return strings.Join(EnvList(env), " ") }

// EnvList is an environment as exec.Cmd's Env entries, in name order.
func EnvList(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// FirstEnvGroup is the leading items of items that share the first item's
// environment: what one worker group runs.
func FirstEnvGroup(items []Item) []Item {
	if len(items) == 0 {
		return items
	}
	k := EnvKey(items[0].Params.Env)
	n := 1
	for n < len(items) && EnvKey(items[n].Params.Env) == k {
		n++
	}
	return items[:n]
}

// EnvGroups counts the distinct environments of a plan's points (the run's
// own included where some point has none).
func (p Plan) EnvGroups() int {
	seen := map[string]bool{}
	for _, it := range p.Items {
		seen[EnvKey(it.Params.Env)] = true
	}
	return len(seen)
}

// PointEnvs lists every variable some point of the plan sets, with the
// values asked for.
func (p Plan) PointEnvs() map[string][]string {
	out := map[string][]string{}
	seen := map[string]bool{}
	for _, it := range p.Items {
		for _, k := range slices.Sorted(maps.Keys(it.Params.Env)) {
			if kv := k + "=" + it.Params.Env[k]; !seen[kv] {
				seen[kv] = true
				out[k] = append(out[k], it.Params.Env[k])
			}
		}
	}
	return out
}

// EnvRule decides whether a PE can run a plan's points as their records
// say, from the environment its NVSHMEM starts with: a point's own
// variables must be there at their values; and a point of a benchmark
// whose other points set a variable (NVSHMEM's choice beside its forced
// algorithms) must not find that variable set, or it would measure what
// the variable forces under the name of NVSHMEM's choice. A variable the
// user set for their own reasons changes only those points: every other
// point runs under it (the header records it).
type EnvRule struct {
	vars     map[string][]string // Plan.Vars
	launched bool                // srun / mpirun: every PE runs every point in the job's environment
}

// EnvRule is the plan's rule; launched: one process per PE runs the whole
// plan in the job's environment (srun, mpirun), so the advice is the
// job's; else the controller starts each point's workers with its own
// variables.
func (p Plan) EnvRule(launched bool) *EnvRule { return &EnvRule{vars: p.Vars, launched: launched} }

// Forced lists the variables that other points of benchmark id set and a
// point of environment env does not: NVSHMEM's choice, which must run
// without them.
func (r *EnvRule) Forced(id string, env map[string]string) []string {
	var out []string
	for _, k := range r.vars[id] {
		if _, own := env[k]; !own {
			out = append(out, k)
		}
	}
	return out
}

// Waiver says why a point of benchmark id with environment env cannot run
// as its record says on a PE whose environment lookup reads ("" where it
// can).
func (r *EnvRule) Waiver(id string, env map[string]string, lookup func(string) (string, bool)) string {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v, ok := lookup(k)
		if ok && v == env[k] {
			continue
		}
		have := "unset"
		if ok {
			have = "=" + v
		}
		if r.launched {
			return fmt.Sprintf("needs %s=%s when NVSHMEM starts, and the job's environment has it %s (under srun / mpirun every PE runs every point in the job's environment): "+
				"measure it in a job started with %s=%s", k, env[k], have, k, env[k])
		}
		return fmt.Sprintf("needs %s=%s in every PE's environment when NVSHMEM starts; this PE's has it %s (the controller starts its workers with it)", k, env[k], have)
	}
	for _, k := range r.Forced(id, env) {
		if v, ok := lookup(k); ok {
			how := "unset it to measure this point"
			if r.launched {
				how = "measure this point in a job started without it"
			}
			return fmt.Sprintf("NVSHMEM's own choice, and the environment sets %s=%s, which would force it: %s", k, v, how)
		}
	}
	return ""
}

// lookupEnv reads this process's environment (tests replace it).
var lookupEnv = os.LookupEnv
