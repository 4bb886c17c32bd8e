// Package wholefile writes a file whole or not at all: the data goes into a
// fresh file in the same folder, renamed over the name once complete, and
// the fresh file is removed on any error. Commands (reproduce's and plot's
// files) and the toolchain (build-shim's copy) write through it.
package wholefile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data (mode perm): the name is replaced, never
// what a symbolic link there points at; on any error nothing is left
// beside it.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".nvshbench-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
