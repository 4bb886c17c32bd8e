package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/internal/wholefile"
	"github.com/nvshbench/nvshbench/plots"
)

// manifestName lists, in a folder nvshbench writes into (reproduce's, plot's
// --out), the files nvshbench wrote there: only those are ever replaced.
const manifestName = ".nvshbench-reproduce"

// owned writes files into a folder that may hold files of the user's: a
// file is written when it is new or the folder's manifest lists it, never
// through a symbolic link (it is replaced by a rename, whatever a name
// points at), and whole (a failed write leaves no empty or half file).
type owned struct {
	dir  string
	list map[string]bool
}

// openOwned opens (creating it if needed) dir for writing owned files.
func openOwned(dir string) (*owned, error) {
	if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, usagef("--out %s: a symbolic link to no folder", dir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o := &owned{dir: dir, list: map[string]bool{}}
	mpath := filepath.Join(dir, manifestName)
	st, err := os.Lstat(mpath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return o, nil
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, usagef("%s is not a plain file: nvshbench does not know which files of %s it wrote", mpath, dir)
	}
	m, err := os.ReadFile(mpath)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(m), "\n") {
		if l != "" {
			o.list[l] = true
		}
	}
	return o, nil
}

// claimed reports whether the folder is one nvshbench writes into (it has
// a manifest).
func (o *owned) claimed() bool {
	_, err := os.Lstat(filepath.Join(o.dir, manifestName))
	return err == nil
}

// write writes name (a plain file name) with data.
func (o *owned) write(name string, data []byte) error {
	path := filepath.Join(o.dir, name)
	if st, err := os.Lstat(path); err == nil {
		if !o.list[name] {
			return fmt.Errorf("%s exists and nvshbench did not write it: not replaced (choose another --out, or move it)", path)
		}
		if !st.Mode().IsRegular() && st.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("%s is not a plain file: not replaced", path)
		}
	}
	if !o.list[name] {
		o.list[name] = true
		if err := o.saveManifest(); err != nil {
			return err
		}
	}
	return wholefile.Write(path, data, 0o644)
}

func (o *owned) saveManifest() error {
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(o.list)) {
		b.WriteString(n + "\n")
	}
	return wholefile.Write(filepath.Join(o.dir, manifestName), []byte(b.String()), 0o644)
}

// writeCharts renders every chart in every format into the owned folder and
// returns the paths written. A chart that fails to render writes nothing.
func writeCharts(o *owned, specs []plots.Spec, formats []string) ([]string, error) {
	var paths []string
	for _, s := range specs {
		for _, f := range formats {
			var buf bytes.Buffer
			name := s.Name + "." + f
			if err := plots.Render(&buf, s, f); err != nil {
				return paths, fmt.Errorf("%s: %w", filepath.Join(o.dir, name), err)
			}
			if err := o.write(name, buf.Bytes()); err != nil {
				return paths, err
			}
			paths = append(paths, filepath.Join(o.dir, name))
		}
	}
	return paths, nil
}
