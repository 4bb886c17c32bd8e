package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// standInToolchain points discovery at a toolchain laid out as the pip
// wheels are, whose nvcc writes "shim" to its -o: build-shim runs through
// without a GPU or CUDA.
func standInToolchain(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cu13/bin/nvcc": `#!/bin/sh
if [ "$1" = "--version" ]; then echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; fi
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then echo shim > "$2"; fi; shift; done
`,
		"nvshmem/include/nvshmem.h":                 "",
		"nvshmem/include/non_abi/nvshmem_version.h": "#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 4\n#define NVSHMEM_VENDOR_PATCH_VERSION 5\n",
		"nvshmem/lib/libnvshmem_host.so.3":          "",
		"nvshmem/lib/libnvshmem_device.a":           "",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CUDA_HOME", filepath.Join(dir, "cu13"))
	t.Setenv("NVSHMEM_HOME", filepath.Join(dir, "nvshmem"))
	t.Setenv("NCCL_HOME", "")
	t.Setenv("NVSHBENCH_PYTHON", "/nonexistent/python3")
	t.Setenv("NVSHBENCH_CACHE", t.TempDir())
}

// build-shim -o writes a new file or replaces a plain one; anything else
// there (a device, a FIFO, a folder, a symbolic link) is refused with exit
// 2 and left as it was, with nothing written beside it.
func TestBuildShimReplacesOnlyAPlainFile(t *testing.T) {
	standInToolchain(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	os.Mkdir(folder, 0o755)
	theirs := filepath.Join(dir, "theirs.so")
	os.WriteFile(theirs, []byte("theirs"), 0o644)
	link := filepath.Join(dir, "link.so")
	os.Symlink(theirs, link)
	targets := []string{fifo, folder, folder + "/", link}
	if os.Getuid() == 0 { // root can make a device node: a /dev/null of our own
		null := filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			targets = append(targets, null)
		}
	}
	before := map[string]os.FileMode{}
	for _, p := range targets {
		st, _ := os.Lstat(p)
		before[p] = st.Mode()
	}
	for _, p := range targets {
		_, stderr, code := nvshbench(t, "build-shim", "-o", p)
		st, err := os.Lstat(p)
		if code != exitUsage || err != nil || st.Mode() != before[p] {
			t.Errorf("build-shim -o %s: exit %d (%s), now %v (was %v)", p, code, strings.TrimSpace(stderr), st.Mode(), before[p])
		}
	}
	if b, _ := os.ReadFile(theirs); string(b) != "theirs" {
		t.Errorf("the file the link points at was written: %q", b)
	}
	if ents, _ := os.ReadDir(folder); len(ents) != 0 {
		t.Errorf("written into the folder: %v", ents)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != len(targets)-1 /* folder/ */ +1 /* theirs.so */ {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files beside the targets: %v", names)
	}
	// A new file, and a plain file of the same name, are written.
	for _, p := range []string{filepath.Join(dir, "new", "libnvshbench.so"), theirs} {
		if _, stderr, code := nvshbench(t, "build-shim", "-o", p); code != 0 {
			t.Errorf("build-shim -o %s: exit %d: %s", p, code, stderr)
		}
		if b, _ := os.ReadFile(p); string(b) != "shim\n" {
			t.Errorf("%s holds %q", p, b)
		}
	}
}
