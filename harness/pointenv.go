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

// EnvConflicts says which variables a point of the plan sets that the
// run's own environment (lookup: the controller's, plus what it adds)
// already sets: the points without them would then not run under NVSHMEM's
// defaults. nil where none.
func (p Plan) EnvConflicts(lookup func(string) (string, bool)) []string {
	var out []string
	pe := p.PointEnvs()
	for _, k := range slices.Sorted(maps.Keys(pe)) {
		if v, ok := lookup(k); ok {
			out = append(out, fmt.Sprintf("%s=%s (points set it to %s)", k, v, strings.Join(pe[k], ", ")))
		}
	}
	return out
}

// lookupEnv reads this process's environment (tests replace it).
var lookupEnv = os.LookupEnv

// envMissing says why this worker cannot run a point of environment env
// ("" if its environment holds every variable at the point's value).
func envMissing(env map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v, ok := lookupEnv(k)
		if ok && v == env[k] {
			continue
		}
		have := "unset"
		if ok {
			have = "=" + v
		}
		return fmt.Sprintf("needs %s=%s in every PE's environment when NVSHMEM starts; this PE's is %s "+
			"(the controller starts workers with it; under srun / mpirun set it in the job's environment)", k, env[k], have)
	}
	return ""
}
