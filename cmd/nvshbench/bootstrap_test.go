package main

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/launcher"
	"github.com/nvshbench/nvshbench/record"
)

// fakeNVSHMEM is an NVSHMEM folder with the host library and every
// bootstrap plugin (empty files: the probe below stands for the loader),
// and a probe that records what it was asked to open and refuses the files
// named in fail.
func fakeNVSHMEM(t *testing.T, fail ...string) (home string, p plugins, opened *[]string) {
	t.Helper()
	home = t.TempDir()
	lib := filepath.Join(home, "lib")
	os.MkdirAll(lib, 0o755)
	for _, f := range []string{"libnvshmem_host.so.3", "nvshmem_bootstrap_pmi.so.3", "nvshmem_bootstrap_pmi2.so.3",
		"nvshmem_bootstrap_pmix.so.3", "nvshmem_bootstrap_mpi.so.3", "nvshmem_bootstrap_uid.so.3"} {
		if err := os.WriteFile(filepath.Join(lib, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened = &[]string{}
	p = plugins{tc: &cuda.Toolchain{NVSHMEMHome: home}, probe: func(file string) error {
		*opened = append(*opened, file)
		if slices.Contains(fail, filepath.Base(file)) {
			return errors.New(file + ": undefined symbol: pmix_value_load")
		}
		return nil
	}}
	return home, p, opened
}

func clearBootstrapEnv(t *testing.T) {
	for _, k := range []string{"NVSHMEM_BOOTSTRAP", "NVSHMEM_BOOTSTRAP_PMI", "NVSHMEM_BOOTSTRAP_PLUGIN", "SLURM_MPI_TYPE"} {
		t.Setenv(k, "")
	}
	for _, bp := range cuda.BootstrapPlugins {
		t.Setenv(bp.Var, "")
	}
}

// Under a launcher, NVSHMEM is pointed at the chosen bootstrap's plugin by
// its full path in the folder of the NVSHMEM nvshbench opened, and the
// probe opened exactly that file; a variable the user set is kept and its
// file is the one probed; without a known folder nothing is set.
func TestBootstrapPluginByFullPath(t *testing.T) {
	clearBootstrapEnv(t)
	home, p, opened := fakeNVSHMEM(t, "nvshmem_bootstrap_pmix.so.3")
	lib := filepath.Join(home, "lib")
	ompi := launcher.Launched{Rank: 0, Size: 2, By: "openmpi"}

	c, err := chooseBootstrap(p, ompi)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"NVSHMEM_BOOTSTRAP": "MPI", "NVSHMEM_BOOTSTRAP_MPI_PLUGIN": filepath.Join(lib, "nvshmem_bootstrap_mpi.so.3")}
	if !maps.Equal(c.Vars, want) || !strings.Contains(c.Why, "PMIX does not load") || !strings.Contains(c.Why, "NVSHMEM_BOOTSTRAP_MPI_PLUGIN="+lib) {
		t.Errorf("openmpi: vars %v why %q", c.Vars, c.Why)
	}
	if !slices.Equal(*opened, []string{filepath.Join(lib, "nvshmem_bootstrap_pmix.so.3"), filepath.Join(lib, "nvshmem_bootstrap_mpi.so.3")}) {
		t.Errorf("probed %q", *opened)
	}

	t.Setenv("SLURM_MPI_TYPE", "pmi2")
	c, err = chooseBootstrap(p, launcher.Launched{Size: 2, By: "slurm"})
	want = map[string]string{"NVSHMEM_BOOTSTRAP": "PMI", "NVSHMEM_BOOTSTRAP_PMI": "PMI-2", "NVSHMEM_BOOTSTRAP_PMI2_PLUGIN": filepath.Join(lib, "nvshmem_bootstrap_pmi2.so.3")}
	if err != nil || !maps.Equal(c.Vars, want) {
		t.Errorf("slurm: %v vars %v", err, c.Vars)
	}

	// The user's plugin variable is theirs: probed, kept, not set again.
	theirs := "/opt/site/nvshmem_bootstrap_mpi.so.3"
	t.Setenv("NVSHMEM_BOOTSTRAP_MPI_PLUGIN", theirs)
	*opened = nil
	c, err = chooseBootstrap(p, ompi)
	if err != nil || c.Vars["NVSHMEM_BOOTSTRAP"] != "MPI" || c.Vars["NVSHMEM_BOOTSTRAP_MPI_PLUGIN"] != "" ||
		!strings.Contains(c.Why, theirs+" (your NVSHMEM_BOOTSTRAP_MPI_PLUGIN, kept)") || !slices.Contains(*opened, theirs) {
		t.Errorf("user's plugin: %v vars %v why %q probed %q", err, c.Vars, c.Why, *opened)
	}
	// ... and one that does not load is refused before NVSHMEM starts.
	t.Setenv("NVSHMEM_BOOTSTRAP_MPI_PLUGIN", "/opt/site/nvshmem_bootstrap_pmix.so.3")
	if _, err := chooseBootstrap(p, ompi); err == nil || !strings.Contains(err.Error(), "no NVSHMEM bootstrap for openmpi loads here") {
		t.Errorf("user's unloadable plugin: %v", err)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_MPI_PLUGIN", "")

	// A bootstrap the user chose gets its plugin's full path.
	t.Setenv("NVSHMEM_BOOTSTRAP", "PMI")
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "PMI2")
	c, err = chooseBootstrap(p, ompi)
	if err != nil || !maps.Equal(c.Vars, map[string]string{"NVSHMEM_BOOTSTRAP_PMI2_PLUGIN": filepath.Join(lib, "nvshmem_bootstrap_pmi2.so.3")}) ||
		!strings.Contains(c.Why, "PMI-2, set by the user") {
		t.Errorf("user's PMI2: %v vars %v why %q", err, c.Vars, c.Why)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "PMIX")
	if _, err := chooseBootstrap(p, ompi); err == nil || !strings.Contains(err.Error(), "pmix_value_load") {
		t.Errorf("user's PMIx that does not load: %v", err)
	}
	// NVSHMEM_BOOTSTRAP=plugin names its file in NVSHMEM_BOOTSTRAP_PLUGIN.
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "")
	t.Setenv("NVSHMEM_BOOTSTRAP", "plugin")
	var ue usageError
	if _, err := chooseBootstrap(p, ompi); !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs NVSHMEM_BOOTSTRAP_PLUGIN") {
		t.Errorf("plugin without its file: %v", err)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_PLUGIN", "/opt/site/mine.so")
	if c, err := chooseBootstrap(p, ompi); err != nil || len(c.Vars) != 0 || !strings.Contains(c.Why, "/opt/site/mine.so, set by the user") {
		t.Errorf("plugin with its file: %v %+v", err, c)
	}
	clearBootstrapEnv(t)

	// No NVSHMEM folder known (the fake, or NVSHMEM only on the loader's
	// path): the bare name, as NVSHMEM's default, and nothing set.
	*opened = nil
	c, err = chooseBootstrap(plugins{tc: &cuda.Toolchain{}, probe: p.probe}, ompi)
	if err != nil || !maps.Equal(c.Vars, map[string]string{"NVSHMEM_BOOTSTRAP": "MPI"}) ||
		!slices.Equal(*opened, []string{"nvshmem_bootstrap_pmix.so.3", "nvshmem_bootstrap_mpi.so.3"}) {
		t.Errorf("no folder: %v vars %v probed %q", err, c.Vars, *opened)
	}

	// doctor's lines: each plugin's file and whether it loads.
	t.Setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "/opt/site/uid.so")
	got := strings.Join(bootstrapReport(p), "\n")
	for _, w := range []string{"PMI    loads: NVSHMEM_BOOTSTRAP_PMI_PLUGIN=" + filepath.Join(lib, "nvshmem_bootstrap_pmi.so.3"),
		"PMIX   does not load: " + filepath.Join(lib, "nvshmem_bootstrap_pmix.so.3") + ": undefined symbol",
		"UID    loads: /opt/site/uid.so (your NVSHMEM_BOOTSTRAP_UID_PLUGIN, kept)"} {
		if !strings.Contains(got, w) {
			t.Errorf("doctor's lines lack %q:\n%s", w, got)
		}
	}

	// A dependency the loader cannot open is named with the plugin that
	// needs it (dlerror names only the dependency), in doctor's line and in
	// the refusal under a launcher.
	clearBootstrapEnv(t)
	noDep := plugins{tc: p.tc, probe: func(file string) error {
		if b := filepath.Base(file); b == "nvshmem_bootstrap_pmix.so.3" || b == "nvshmem_bootstrap_mpi.so.3" {
			return errors.New("libmpi.so.40: cannot open shared object file: No such file or directory")
		}
		return nil
	}}
	mpi := filepath.Join(lib, "nvshmem_bootstrap_mpi.so.3")
	if got := strings.Join(bootstrapReport(noDep), "\n"); !strings.Contains(got, "MPI    does not load: "+mpi+": libmpi.so.40: cannot open") {
		t.Errorf("doctor's line for a missing dependency does not name the plugin:\n%s", got)
	}
	if _, err := chooseBootstrap(noDep, ompi); err == nil || !strings.Contains(err.Error(), "MPI does not load ("+mpi+": libmpi.so.40: cannot open") {
		t.Errorf("refusal for a missing dependency: %v", err)
	}
}

// run's own workers get the unique-ID plugin by its full path (recorded in
// the header with the other NVSHMEM_ variables); not where the user set it,
// nor under the fake.
func TestUIDPluginForWorkers(t *testing.T) {
	clearBootstrapEnv(t)
	home, _, _ := fakeNVSHMEM(t)
	g := &gpuSetup{lib: cuda.NewFake(), shimPath: "/x/libnvshbench.so", tc: &cuda.Toolchain{NVSHMEMHome: home}}
	env := map[string]string{"NVSHMEM_DISABLE_P2P": "1"}
	addUIDPlugin(g, env)
	if want := filepath.Join(home, "lib", "nvshmem_bootstrap_uid.so.3"); env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"] != want || env["NVSHMEM_DISABLE_P2P"] != "1" {
		t.Errorf("env %v, want the UID plugin %s", env, want)
	}
	if h := buildHeader(g, 1, 1, env); h.Env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"] != env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"] {
		t.Errorf("the header's env %v lacks it", h.Env)
	}
	if we := g.workerEnv(env); !slices.Contains(we, "NVSHMEM_BOOTSTRAP_UID_PLUGIN="+env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"]) {
		t.Errorf("the workers' env lacks it")
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "/opt/site/uid.so")
	env = map[string]string{}
	if addUIDPlugin(g, env); len(env) != 0 {
		t.Errorf("the user's variable was overridden: %v", env)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "")
	g.shimPath = "fake"
	if addUIDPlugin(g, env); len(env) != 0 {
		t.Errorf("the fake got %v", env)
	}
}

// A file written before nvshbench set the plugin variables resumes under a
// run that sets one, and compare does not call their setups different for
// it; a variable that changes what is measured still does both.
func TestPluginVariableIsNoSetupDifference(t *testing.T) {
	clearBootstrapEnv(t)
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	args := func(out, sizes string) []string {
		return []string{"run", "--shim", "fake", "--sizes", sizes, "--samples", "3", "--out", out, "rma/put/block"}
	}
	if _, stderr, code := nvshbench(t, args(old, "4K")...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, stderr)
	}
	// The same file, resumed by a run whose header records the plugin: the
	// point there is kept, the new one measured.
	t.Setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "/elsewhere/nvshmem/lib/nvshmem_bootstrap_uid.so.3")
	_, stderr, code := nvshbench(t, args(old, "4K,8K")...)
	if code != 0 || !strings.Contains(stderr, "1 point(s) written") || !strings.Contains(stderr, "already there") {
		t.Fatalf("resume with the plugin variable: exit %d %s", code, stderr)
	}
	newer := filepath.Join(dir, "new.jsonl")
	if _, stderr, code := nvshbench(t, args(newer, "4K,8K")...); code != 0 {
		t.Fatalf("new run: exit %d %s", code, stderr)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "")
	t.Setenv("NVSHMEM_DISABLE_NCCL", "1")
	knob := filepath.Join(dir, "knob.jsonl")
	if _, stderr, code := nvshbench(t, args(knob, "4K,8K")...); code != 0 {
		t.Fatalf("knob run: exit %d %s", code, stderr)
	}
	var files []*record.File
	for _, p := range []string{old, newer, knob} {
		f, err := record.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if files[1].Header.Env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"] == "" || files[0].Header.Env["NVSHMEM_BOOTSTRAP_UID_PLUGIN"] != "" {
		t.Fatalf("headers: old %v new %v", files[0].Header.Env, files[1].Header.Env)
	}
	if d := compare.SetupDiffs(files[:2]); len(d) != 0 {
		t.Errorf("compare calls the plugin variable a setup difference: %q", d)
	}
	if d := strings.Join(compare.SetupDiffs([]*record.File{files[0], files[2]}), "; "); !strings.Contains(d, "NVSHMEM_DISABLE_NCCL") {
		t.Errorf("a real knob is no longer a setup difference: %q", d)
	}
	if _, stderr, code := nvshbench(t, args(old, "4K,8K")...); code != exitUsage || !strings.Contains(stderr, "NVSHMEM_DISABLE_NCCL") {
		t.Errorf("resume with another knob: exit %d %s", code, stderr)
	}
}
