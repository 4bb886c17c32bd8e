package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/internal/wholefile"
)

// shimSources are the shim's sources (package shim embeds them).
var shimSources = shim.Sources

// Toolchain is what Discover found: nvcc, NVSHMEM and NCCL, and where each
// came from.
type Toolchain struct {
	NVCC           string
	CUDAHome       string // the folder holding bin/nvcc
	NVCCVersion    string // "13.0.88"
	NVSHMEMHome    string // holds include/nvshmem.h and lib/libnvshmem_device.a
	NVSHMEMVersion string // from its headers
	NCCLHome       string // holds include/nccl.h and lib/libnccl.so.2
	NCCLVersion    string
	Archs          []string // compute capabilities to build for, e.g. "90"
	From           map[string]string
}

// Discover finds the CUDA compiler, NVSHMEM and NCCL: CUDA_HOME,
// NVSHMEM_HOME and NCCL_HOME when set, else nvcc on PATH and the pip wheels
// (nvidia/cu13, nvidia/nvshmem, nvidia/nccl) in the site-packages of
// python3 (or $NVSHBENCH_PYTHON), else /usr/local/cuda.
func Discover() (*Toolchain, error) {
	t := &Toolchain{From: map[string]string{}, Archs: []string{"90"}}
	if a := os.Getenv("NVSHBENCH_CUDA_ARCHS"); a != "" {
		t.Archs = strings.Split(a, ",")
	}
	sites := sitePackages()
	wheel := func(sub, marker string) string {
		for _, s := range sites {
			d := filepath.Join(s, "nvidia", sub)
			if fileExists(filepath.Join(d, marker)) {
				return d
			}
		}
		return ""
	}
	// nvcc
	switch {
	case os.Getenv("CUDA_HOME") != "":
		t.CUDAHome, t.From["cuda"] = os.Getenv("CUDA_HOME"), "CUDA_HOME"
	default:
		if p, err := exec.LookPath("nvcc"); err == nil {
			t.CUDAHome, t.From["cuda"] = filepath.Dir(filepath.Dir(p)), "PATH"
		} else if d := wheel("cu13", "bin/nvcc"); d != "" {
			t.CUDAHome, t.From["cuda"] = d, "pip wheel nvidia-cuda-nvcc"
		} else if fileExists("/usr/local/cuda/bin/nvcc") {
			t.CUDAHome, t.From["cuda"] = "/usr/local/cuda", "/usr/local/cuda"
		}
	}
	if t.CUDAHome != "" {
		t.NVCC = filepath.Join(t.CUDAHome, "bin", "nvcc")
		if out, err := exec.Command(t.NVCC, "--version").CombinedOutput(); err == nil {
			if m := regexp.MustCompile(`V(\d+\.\d+\.\d+)`).FindSubmatch(out); m != nil {
				t.NVCCVersion = string(m[1])
			}
		}
	}
	// NVSHMEM
	if h := os.Getenv("NVSHMEM_HOME"); h != "" {
		t.NVSHMEMHome, t.From["nvshmem"] = h, "NVSHMEM_HOME"
	} else if d := wheel("nvshmem", "include/nvshmem.h"); d != "" {
		t.NVSHMEMHome, t.From["nvshmem"] = d, "pip wheel nvidia-nvshmem-cu13"
	}
	if t.NVSHMEMHome != "" {
		t.NVSHMEMVersion = headerVersion(filepath.Join(t.NVSHMEMHome, "include/non_abi/nvshmem_version.h"),
			"NVSHMEM_VENDOR_MAJOR_VERSION", "NVSHMEM_VENDOR_MINOR_VERSION", "NVSHMEM_VENDOR_PATCH_VERSION")
	}
	// NCCL
	if h := os.Getenv("NCCL_HOME"); h != "" {
		t.NCCLHome, t.From["nccl"] = h, "NCCL_HOME"
	} else if d := wheel("nccl", "include/nccl.h"); d != "" {
		t.NCCLHome, t.From["nccl"] = d, "pip wheel nvidia-nccl-cu13"
	}
	if t.NCCLHome != "" {
		t.NCCLVersion = headerVersion(filepath.Join(t.NCCLHome, "include/nccl.h"), "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")
	}
	var missing []string
	if t.NVCC == "" {
		missing = append(missing, "nvcc (set CUDA_HOME, or pip install nvidia-cuda-nvcc)")
	}
	if t.NVSHMEMHome == "" {
		missing = append(missing, "NVSHMEM (set NVSHMEM_HOME, or pip install nvidia-nvshmem-cu13)")
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("toolchain incomplete: missing %s", strings.Join(missing, "; "))
	}
	return t, nil
}

// sitePackages lists the site-packages folders of the Python interpreter.
func sitePackages() []string {
	py := os.Getenv("NVSHBENCH_PYTHON")
	if py == "" {
		py = "python3"
	}
	out, err := exec.Command(py, "-c", "import site,sys; print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))").Output()
	if err != nil {
		return nil
	}
	// One folder a line: a folder's name may hold spaces.
	var dirs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			dirs = append(dirs, l)
		}
	}
	return dirs
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func headerVersion(path string, names ...string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var parts []string
	for _, n := range names {
		m := regexp.MustCompile(`#define\s+` + n + `\s+(\d+)`).FindSubmatch(b)
		if m == nil {
			return ""
		}
		parts = append(parts, string(m[1]))
	}
	return strings.Join(parts, ".")
}

// NVSHMEMLibDir is the folder of the libnvshmem_host.so.3 that Preload
// opens, "" when discovery found none: NVSHMEM's bootstrap plugins lie
// beside it.
func (t *Toolchain) NVSHMEMLibDir() string {
	if t == nil || t.NVSHMEMHome == "" {
		return ""
	}
	d := filepath.Join(t.NVSHMEMHome, "lib")
	if !fileExists(filepath.Join(d, "libnvshmem_host.so.3")) {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		d = abs // the workers and NVSHMEM get paths that hold wherever they run
	}
	return d
}

// BootstrapPlugin is one of NVSHMEM's bootstrap plugins.
type BootstrapPlugin struct {
	Mode string // as nvshbench names it: PMI, PMI-2, PMIX, MPI, UID
	Var  string // the variable NVSHMEM takes the plugin's file from
	File string // the file's name in NVSHMEM's lib folder
}

// BootstrapPlugins are NVSHMEM's bootstrap plugins and how NVSHMEM finds
// them. As read in NVSHMEM 3.4.5's source (github.com/NVIDIA/nvshmem, tag
// v3.4.5-0, commit 131da55f643ac87c810ba0bc51d359258bf433a1):
// src/include/host/env/env_defs.h:103-149 defines one variable per plugin,
// NVSHMEM_BOOTSTRAP_{MPI,SHMEM,PMI,PMI2,PMIX,UID}_PLUGIN, "Absolute path to
// or name of" its file, by default the bare name nvshmem_bootstrap_<x>.so.3
// (3 is the plugin ABI major, src/CMakeLists.txt:8);
// src/host/bootstrap/bootstrap.cpp:146-243 takes the variable of the mode
// NVSHMEM_BOOTSTRAP (and NVSHMEM_BOOTSTRAP_PMI) select, or of the unique ID
// (bootstrap.cpp:130-131, 231-235), and bootstrap_loader.cpp:61 hands its
// value to dlopen(value, RTLD_NOW) as it is: a full path opens that file, a
// bare name goes through the loader's search. NVSHMEM_BOOTSTRAP_PLUGIN is
// read only for NVSHMEM_BOOTSTRAP=plugin (bootstrap.cpp:216-226). The pip
// wheel's libnvshmem_host.so.3 holds these names (strings) and the five
// files below.
var BootstrapPlugins = []BootstrapPlugin{
	{"PMI", "NVSHMEM_BOOTSTRAP_PMI_PLUGIN", "nvshmem_bootstrap_pmi.so.3"},
	{"PMI-2", "NVSHMEM_BOOTSTRAP_PMI2_PLUGIN", "nvshmem_bootstrap_pmi2.so.3"},
	{"PMIX", "NVSHMEM_BOOTSTRAP_PMIX_PLUGIN", "nvshmem_bootstrap_pmix.so.3"},
	{"MPI", "NVSHMEM_BOOTSTRAP_MPI_PLUGIN", "nvshmem_bootstrap_mpi.so.3"},
	{"UID", "NVSHMEM_BOOTSTRAP_UID_PLUGIN", "nvshmem_bootstrap_uid.so.3"},
}

// PluginFor returns the bootstrap plugin of a mode (PMI, PMI-2, PMIX, MPI,
// UID).
func PluginFor(mode string) (BootstrapPlugin, bool) {
	for _, p := range BootstrapPlugins {
		if p.Mode == mode {
			return p, true
		}
	}
	return BootstrapPlugin{}, false
}

// PluginFile is the file NVSHMEM will open for p: the user's
// NVSHMEM_BOOTSTRAP_<x>_PLUGIN where set (theirs is true), else p's file
// by its full path in NVSHMEMLibDir where it is there, else p's bare name
// (NVSHMEM's default, found by the loader's search).
func (t *Toolchain) PluginFile(p BootstrapPlugin) (file string, theirs bool) {
	if v := os.Getenv(p.Var); v != "" {
		return v, true
	}
	if d := t.NVSHMEMLibDir(); d != "" && fileExists(filepath.Join(d, p.File)) {
		return filepath.Join(d, p.File), false
	}
	return p.File, false
}

// LibraryPath is what LD_LIBRARY_PATH must hold for the shim's workers:
// NVSHMEM's lib folder (its bootstrap and transport plugins are opened by
// soname) and NCCL's (so NVSHMEM's dlopen of libnccl.so.2 finds the same
// NCCL the headers came from).
func (t *Toolchain) LibraryPath() []string {
	var out []string
	for _, d := range []string{t.NVSHMEMHome, t.NCCLHome} {
		if d != "" {
			out = append(out, filepath.Join(d, "lib"))
		}
	}
	for _, d := range []string{"lib64", "lib"} {
		if t.CUDAHome != "" && fileExists(filepath.Join(t.CUDAHome, d, "libcudart.so."+majorOf(t.NVCCVersion))) {
			out = append(out, filepath.Join(t.CUDAHome, d))
		}
	}
	return out
}

func majorOf(v string) string {
	if i := strings.IndexByte(v, '.'); i > 0 {
		return v[:i]
	}
	return v
}

// SourceHash identifies the shim sources plus the toolchain versions: the
// cache key of a built shim.
func (t *Toolchain) SourceHash() string {
	h := sha256.New()
	names, _ := fs.Glob(shimSources, "*")
	sort.Strings(names)
	for _, n := range names {
		b, _ := shimSources.ReadFile(n)
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	fmt.Fprintf(h, "nvcc=%s %s\nnvshmem=%s %s\nnccl=%s\narchs=%v\n", t.NVCCVersion, t.NVCC, t.NVSHMEMVersion, t.NVSHMEMHome, t.NCCLVersion, t.Archs)
	// The flags too: an include folder that appears changes what is built.
	fmt.Fprintf(h, "cmd=%s\n", strings.Join(t.BuildCommand("SRC", "OUT"), " "))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// CopyShim puts the built shim for this toolchain at out: from the cache
// when the same sources were built with the same toolchain before, else
// built into the cache first. built says whether nvcc ran.
func (t *Toolchain) CopyShim(out string, log io.Writer) (built bool, err error) {
	src, err := t.CachedShimPath()
	if err != nil {
		return false, err
	}
	if !fileExists(src) {
		if err := t.Build(src, log); err != nil {
			return true, err
		}
		built = true
	}
	if abs, _ := filepath.Abs(out); abs == src {
		return built, nil
	}
	if err := ShimTarget(out); err != nil {
		return built, err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return built, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return built, err
	}
	return built, wholefile.Write(out, b, 0o755)
}

// ShimTarget refuses a place for a built library that is neither absent
// nor a regular file: a device, a FIFO, a folder or a symbolic link is no
// library of ours, and a copy renamed over it would replace it.
func ShimTarget(path string) error {
	if strings.HasSuffix(path, "/") {
		return fmt.Errorf("%s names a folder: name the library's file, e.g. %s", path, filepath.Join(path, "libnvshbench.so"))
	}
	st, err := os.Lstat(path)
	if err != nil {
		return nil // absent: written (a folder that cannot be made says why then)
	}
	switch m := st.Mode(); {
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: name the library's file itself", path)
	case m.IsDir():
		return fmt.Errorf("%s is a folder: name the library's file, e.g. %s", path, filepath.Join(path, "libnvshbench.so"))
	case !m.IsRegular():
		return fmt.Errorf("%s is not a regular file (%s): the library is written only as a new file or over a plain one", path, m.Type())
	}
	return nil
}

// CacheDir is where built shims are kept: $NVSHBENCH_CACHE, else
// $XDG_CACHE_HOME/nvshbench, else ~/.cache/nvshbench. Without a home
// folder it is a folder of this user's under the temporary folder, created
// private (0700) and checked to be so: a shared library is loaded from it,
// so a folder another user could have planted is refused.
func CacheDir() (string, error) {
	if d := os.Getenv("NVSHBENCH_CACHE"); d != "" {
		return d, nil
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "nvshbench"), nil
	}
	d := filepath.Join(os.TempDir(), fmt.Sprintf("nvshbench-cache-%d", os.Getuid()))
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return d, privateDir(d)
}

// privateDir refuses a folder that is a link, not this user's, or open to
// others.
func privateDir(d string) error {
	st, err := os.Lstat(d)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Getuid() || st.Mode().Perm()&0o077 != 0 {
		owner := -1
		if ok {
			owner = int(sys.Uid)
		}
		return fmt.Errorf("the shim cache %s is not a private folder of this user (owner %d, mode %s): a shared library would be loaded from it; set HOME or NVSHBENCH_CACHE to a folder of yours", d, owner, st.Mode())
	}
	return nil
}

// CachedShimPath is where the shim for this toolchain lives in the cache.
func (t *Toolchain) CachedShimPath() (string, error) {
	d, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "libnvshbench-"+t.SourceHash()+".so"), nil
}

// BuildCommand returns the nvcc command that compiles src into out. NVSHMEM's
// host library is handed to the linker by its path (the pip wheel ships
// only the .so.3, no unversioned link for -l). Every warning is an error
// (-Werror all-warnings): a warning the shim's code draws is a mistake the
// build refuses (an atomic's NB_AMO with its after rule left empty: "expression
// has no effect"), in CI against both library sets and wherever it is built.
func (t *Toolchain) BuildCommand(src, out string) []string {
	args := []string{t.NVCC, "-O3", "-std=c++17", "-rdc=true", "-Werror", "all-warnings", "-Xcompiler", "-fPIC", "-shared", "-lineinfo"}
	for _, a := range t.Archs {
		args = append(args, "-gencode", "arch=compute_"+a+",code=sm_"+a)
	}
	args = append(args, "-I"+filepath.Join(t.NVSHMEMHome, "include"))
	// NCCL's headers bring the device-API benchmarks (nccl_device.h); the
	// library itself is opened at run time.
	if t.NCCLHome != "" && fileExists(filepath.Join(t.NCCLHome, "include", "nccl_device.h")) {
		args = append(args, "-I"+filepath.Join(t.NCCLHome, "include"))
	}
	if d := filepath.Join(t.CUDAHome, "include", "cccl"); dirExists(d) {
		args = append(args, "-I"+d)
	}
	args = append(args, src, filepath.Join(t.NVSHMEMHome, "lib", "libnvshmem_device.a"))
	for _, d := range []string{"lib64", "lib"} {
		if dirExists(filepath.Join(t.CUDAHome, d)) {
			args = append(args, "-L"+filepath.Join(t.CUDAHome, d))
		}
	}
	args = append(args, "-Xlinker", t.hostLib(),
		"-Xlinker", "-rpath,"+filepath.Join(t.NVSHMEMHome, "lib"), "-o", out)
	return args
}

// hostLib is NVSHMEM's host library file.
func (t *Toolchain) hostLib() string {
	host := filepath.Join(t.NVSHMEMHome, "lib", "libnvshmem_host.so")
	if !fileExists(host) {
		host += ".3"
	}
	return host
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Build compiles the embedded shim sources into out (written atomically).
// log receives nvcc's output.
func (t *Toolchain) Build(out string, log io.Writer) error {
	if t.NVCC == "" || t.NVSHMEMHome == "" {
		return errors.New("cannot build the shim: nvcc or NVSHMEM not found (see 'nvshbench doctor')")
	}
	work, err := os.MkdirTemp("", "nvshbench-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	names, _ := fs.Glob(shimSources, "*")
	for _, n := range names {
		b, _ := shimSources.ReadFile(n)
		if err := os.WriteFile(filepath.Join(work, filepath.Base(n)), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp" + fmt.Sprint(os.Getpid())
	cmdline := t.BuildCommand(filepath.Join(work, "nvshbench.cu"), tmp)
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if log != nil {
		fmt.Fprintf(log, "building the CUDA shim: %s\n", strings.Join(cmdline, " "))
	}
	err = cmd.Run()
	if log != nil {
		log.Write(buf.Bytes())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("nvcc failed (%v):\n%s", err, tailLines(buf.String(), 30))
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// EnsureShim returns a built shim for this toolchain, building it into the
// cache when missing or stale.
func (t *Toolchain) EnsureShim(log io.Writer) (string, error) {
	p, err := t.CachedShimPath()
	if err != nil {
		return "", err
	}
	if fileExists(p) {
		return p, nil
	}
	return p, t.Build(p, log)
}
