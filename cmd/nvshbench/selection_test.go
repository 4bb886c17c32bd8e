package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Sizes a selected benchmark does not take are named with its range: none
// taken by any benchmark is refused (exit 2), some is said and the rest
// measured.
func TestSizesABenchmarkDoesNotTakeAreNamed(t *testing.T) {
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "64M", "--out", filepath.Join(t.TempDir(), "x.jsonl"), "rma/iput/block")
	if code != exitUsage || !strings.Contains(stderr, "rma/iput/block") || !strings.Contains(stderr, "4 MiB") || !strings.Contains(stderr, "64 MiB") {
		t.Errorf("--sizes 64M rma/iput/block: exit %d, want 2 naming the benchmark's range: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "some.jsonl")
	_, stderr, code = nvshbench(t, "run", "--shim", "fake", "--sizes", "1M,64M", "--samples", "2", "--out", out, "rma/iput/block", "rma/put/block")
	if code != 0 || !regexp.MustCompile(`rma/iput/block takes [^\n]*4 MiB[^\n]*: 64 MiB not measured`).MatchString(stderr) {
		t.Errorf("--sizes 1M,64M: exit %d, want 0 saying what iput drops: %s", code, stderr)
	}
	for _, p := range mustRead(t, out).Points {
		if p.ID == "rma/iput/block" && p.Params.Size != 1<<20 {
			t.Errorf("iput measured at %d", p.Params.Size)
		}
	}
}

// A value read back out of its physical range (a share above 1, a negative
// time, 1e300 bytes) fails every reader's check, naming the file, line and
// point; it is never printed as a fact ("busy 200 %").
func TestImplausibleValuesRefused(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.jsonl")
	fakeRun(t, a, "--sizes", "64K", "rma/put/block")
	for _, bad := range []string{`"ce_busy":2`, `"ce_copy_s":-1e-06`, `"remote_bytes":1e300`, `"ce_sm_free":-0.5`, `"load_rank":0.25`} {
		f, line := withLastPoint(t, a, func(l string) string {
			return strings.Replace(l, `"status":`, `"values":{`+bad+`},"status":`, 1)
		})
		name := strings.Trim(strings.SplitN(bad, ":", 2)[0], `"`)
		for _, args := range [][]string{{"report", f}, {"model", f}, {"compare", a, f}} {
			_, stderr, code := nvshbench(t, args...)
			if code != exitError || !strings.Contains(stderr, fmt.Sprintf("bad.jsonl:%d", line)) || !strings.Contains(stderr, name) || !strings.Contains(stderr, "rma/put/block size=65536") {
				t.Errorf("%s, %s: exit %d: %s", bad, args[0], code, stderr)
			}
		}
	}
}

// scripts/mpirun-example.sh, run with a stand-in mpirun: it does not ask
// doctor for a line it no longer prints, and passes LD_LIBRARY_PATH to the
// ranks as it was (no empty entry at its head: the current folder).
func TestMpirunExampleScript(t *testing.T) {
	root := repoRoot(t)
	bin := t.TempDir()
	seen := filepath.Join(t.TempDir(), "mpirun.env")
	stub := fmt.Sprintf("#!/bin/sh\n{ printf 'LD_LIBRARY_PATH=%%s\\n' \"${LD_LIBRARY_PATH-<unset>}\"; printf 'ARGS=%%s\\n' \"$*\"; } > %q\n", seen)
	if err := os.WriteFile(filepath.Join(bin, "mpirun"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lp := range []string{"/opt/site/lib", ""} {
		cmd := exec.Command("bash", filepath.Join(root, "scripts/mpirun-example.sh"))
		cmd.Dir = t.TempDir()
		cmd.Env = append(testEnv("NVSHBENCH="+nvshbenchExe(t), "NP=2", "PPN=2", "PATH="+bin+":"+os.Getenv("PATH")), "LD_LIBRARY_PATH="+lp)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("LD_LIBRARY_PATH=%q: %v\n%s", lp, err, b)
		}
		got, _ := os.ReadFile(seen)
		want := "LD_LIBRARY_PATH=" + lp + "\n"
		if !strings.HasPrefix(string(got), want) || !strings.Contains(string(got), "run --out") {
			t.Errorf("LD_LIBRARY_PATH=%q: mpirun saw %q, want %q first", lp, got, want)
		}
	}
}
