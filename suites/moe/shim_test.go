package moe

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
)

// shimProgram compiles prog (C) beside the shim's headers that it
// includes, with cc, and returns the executable; it skips the test where
// there is no C compiler.
func shimProgram(t *testing.T, prog string, headers ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("SKIPPED: no C compiler to run the shim's code")
	}
	dir := t.TempDir()
	for _, name := range headers {
		h, err := cuda.ShimFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), h, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "m.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "m")
	if out, err := exec.Command(cc, "-O1", "-Wall", "-o", exe, filepath.Join(dir, "m.c"), "-lm").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return exe
}

// outputLines runs exe on in and returns its lines of output: one for each
// of the n inputs.
func outputLines(t *testing.T, exe string, in io.Reader, n int) []string {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Stdin = in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != n {
		t.Fatalf("%s answered %d of %d inputs", exe, len(lines), n)
	}
	return lines
}
