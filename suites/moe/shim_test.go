package moe

import (
	"os"
	"os/exec"
	"path/filepath"
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
