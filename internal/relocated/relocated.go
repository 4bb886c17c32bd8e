// Package relocated sets up, for tests, the cluster case of a CUDA shim
// built on one machine and loaded on another whose NVSHMEM lives in another
// folder: a copy of the shim whose RUNPATH names a folder that does not
// exist (the build machine's, absent here), and a copy of the NVSHMEM host
// library and bootstrap plugins it was built against in a folder of their
// own. Tests in cuda and cmd/nvshbench use it with the shim that
// scripts/ci-toolchain.sh builds against the pinned pip wheels; no GPU is
// needed.
package relocated

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Setup is a shim and the NVSHMEM it was built against, moved apart.
type Setup struct {
	Built string // the NVSHMEM lib folder the shim was linked against (its RUNPATH)
	Home  string // the relocated NVSHMEM_HOME: Home/lib holds the copy
	Shim  string // the shim's copy: its RUNPATH names a folder that does not exist
	Gone  string // that folder
}

// EnvShim names the shim to relocate (default: build/libnvshbench.so of
// the module); EnvRequire=1 makes a missing one a failure instead of a skip
// (scripts/ci-toolchain.sh sets both after building it).
const (
	EnvShim    = "NVSHBENCH_RELOCATE_SHIM"
	EnvRequire = "NVSHBENCH_RELOCATE_REQUIRE"
)

// New relocates the shim into t's temporary folder, or skips t, saying
// why, when there is no shim built against an NVSHMEM folder here (a
// failure when EnvRequire=1).
func New(t testing.TB) *Setup {
	t.Helper()
	shim := os.Getenv(EnvShim)
	if shim == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		shim = filepath.Join(root, "build", "libnvshbench.so")
	}
	s, why, err := Make(t.TempDir(), shim)
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s", EnvRequire, why)
		}
		t.Skipf("SKIPPED: %s (make shim-check builds it against the pinned wheels and runs this test)", why)
	}
	return s
}

// Make relocates shim into dir. why is non-empty, and nothing made, when
// shim is missing or names no NVSHMEM folder that holds the host library.
func Make(dir, shim string) (s *Setup, why string, err error) {
	if _, err := os.Stat(shim); err != nil {
		return nil, "no shim at " + shim, nil
	}
	f, err := elf.Open(shim)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", shim, err)
	}
	paths, err := runpaths(f)
	f.Close()
	if err != nil {
		return nil, "", err
	}
	s = &Setup{Home: filepath.Join(dir, "compute-node", "nvshmem")}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, "libnvshmem_host.so.3")); err == nil {
			s.Built = p
			break
		}
	}
	if s.Built == "" {
		return nil, fmt.Sprintf("the shim %s names no folder holding libnvshmem_host.so.3 (RUNPATH %q)", shim, paths), nil
	}
	// The NVSHMEM side: its host library and every bootstrap plugin, copied
	// (not linked: the loader would know a hard link's inode as the
	// original's).
	plugins, _ := filepath.Glob(filepath.Join(s.Built, "nvshmem_bootstrap_*.so*"))
	if len(plugins) == 0 {
		return nil, "", fmt.Errorf("no nvshmem_bootstrap_*.so* beside %s", filepath.Join(s.Built, "libnvshmem_host.so.3"))
	}
	for _, src := range append([]string{filepath.Join(s.Built, "libnvshmem_host.so.3")}, plugins...) {
		if err := copyFile(src, filepath.Join(s.Home, "lib", filepath.Base(src))); err != nil {
			return nil, "", err
		}
	}
	if v := filepath.Join(s.Built, "..", "include", "non_abi", "nvshmem_version.h"); fileExists(v) {
		if err := copyFile(v, filepath.Join(s.Home, "include", "non_abi", "nvshmem_version.h")); err != nil {
			return nil, "", err
		}
	}
	s.Shim = filepath.Join(dir, "login-node", "libnvshbench.so")
	if s.Gone, err = withoutRunpath(shim, s.Shim); err != nil {
		return nil, "", err
	}
	return s, "", nil
}

// runpaths are the folders of an ELF file's DT_RUNPATH and DT_RPATH.
func runpaths(f *elf.File) ([]string, error) {
	var out []string
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vs, err := f.DynString(tag)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			out = append(out, filepath.SplitList(v)...)
		}
	}
	return out, nil
}

// withoutRunpath copies the shared library src to dst with every byte of
// its RUNPATH and RPATH strings replaced by a path of the same length that
// does not exist (the layout of the file is unchanged), as the build
// machine's folder is absent on a compute node. It checks the copy: the new
// path is its only one, and its needed libraries and dynamic symbols are
// the original's.
func withoutRunpath(src, dst string) (gone string, err error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	dynstr := f.Section(".dynstr")
	if dynstr == nil {
		return "", fmt.Errorf("%s has no .dynstr", src)
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		offs, err := f.DynValue(tag)
		if err != nil {
			return "", err
		}
		for _, off := range offs {
			if off >= dynstr.Size {
				return "", fmt.Errorf("%s: %v offset %d outside .dynstr", src, tag, off)
			}
			start := int(dynstr.Offset + off)
			n := bytes.IndexByte(b[start:], 0)
			if n <= 1 {
				return "", fmt.Errorf("%s: empty %v", src, tag)
			}
			if gone != "" && len(gone) != n {
				return "", fmt.Errorf("%s: a RUNPATH and an RPATH of different lengths", src)
			}
			gone = absent(n)
			copy(b[start:start+n], gone)
		}
	}
	if gone == "" {
		return "", fmt.Errorf("%s has no RUNPATH or RPATH to take away", src)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s exists on this machine: cannot stand for an absent folder", gone)
	}
	g, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	after, err := runpaths(g)
	if err != nil {
		return "", err
	}
	for _, p := range after {
		if p != gone {
			return "", fmt.Errorf("the copy still has the path %q", p)
		}
	}
	for _, same := range []func(*elf.File) ([]string, error){neededLibs, symbolNames} {
		x, err1 := same(f)
		y, err2 := same(g)
		if err1 != nil || err2 != nil || !slices.Equal(x, y) {
			return "", fmt.Errorf("rewriting the RUNPATH of %s changed more than the RUNPATH (%v %v)", src, err1, err2)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return gone, os.WriteFile(dst, b, 0o755)
}

func neededLibs(f *elf.File) ([]string, error) { return f.ImportedLibraries() }

func symbolNames(f *elf.File) ([]string, error) {
	syms, err := f.DynamicSymbols()
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	return names, err
}

// absent is a path of n bytes that names no folder here.
func absent(n int) string {
	p := "/nonexistent-build-machine/"
	if n < len(p) {
		return "/" + strings.Repeat("x", n-1)
	}
	return p + strings.Repeat("x", n-len(p))
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no go.mod above the test's folder")
		}
		d = up
	}
}

// Env is environ without the variables that would let a process find
// NVSHMEM, CUDA or the shim by any way but the relocated copy (the loader's
// path, discovery's homes and Python, NVSHMEM's own plugin variables, a
// launcher's rank variables), plus extra.
func (s *Setup) Env(environ []string, extra ...string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "LD_LIBRARY_PATH", k == "LD_PRELOAD", k == "CUDA_HOME", k == "NCCL_HOME", k == "NVSHMEM_HOME",
			k == "NVSHBENCH_PYTHON", k == "NVSHBENCH_SHIM", strings.HasPrefix(k, "NVSHMEM_"),
			strings.HasPrefix(k, "OMPI_"), strings.HasPrefix(k, "PMI_"), strings.HasPrefix(k, "PMIX_"), strings.HasPrefix(k, "SLURM_"):
			continue
		}
		out = append(out, kv)
	}
	// No Python: discovery finds NVSHMEM through NVSHMEM_HOME alone.
	return append(append(out, "NVSHMEM_HOME="+s.Home, "NVSHBENCH_PYTHON="+filepath.Join(s.Gone, "python3")), extra...)
}
