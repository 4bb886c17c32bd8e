// Package shim holds the CUDA shim's sources (the files build-shim compiles
// into libnvshbench.so) and what the Go side reads from them: the dispatch
// table's operations and traits, the checks, the collectives. It imports
// nothing of the module, so a reader of results (the model) may list the
// operations without the GPU layer (package cuda), which re-exports it.
package shim

import (
	"embed"
	"io/fs"
)

//go:embed *.cu *.cuh *.h
var Sources embed.FS

// OpNameLen is the ABI's operation name field (nvshbench.h NB_OP_NAME).
const OpNameLen = 32

// File is one of the sources, by name ("common.cuh"), for tests that check a
// Go twin against its C original.
func File(name string) ([]byte, error) { return Sources.ReadFile(name) }

// Files are the sources by name.
func Files() map[string]string {
	files := map[string]string{}
	names, _ := fs.Glob(Sources, "*")
	for _, n := range names {
		b, _ := Sources.ReadFile(n)
		files[n] = string(b)
	}
	return files
}
