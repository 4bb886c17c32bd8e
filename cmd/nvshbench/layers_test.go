package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nvshbench/nvshbench"

// The layers of the module, lowest first. A package imports only packages
// of its own layer and of the layers it names; a leaf imports no package
// of the module at all (only the standard library and third-party
// modules). Results are the interface between the two middle layers: the
// runners write them, the readers read them, and neither imports the
// other (the readers never see the GPU layer).
//
//	leaf     table, units, ids, decide, lists, golden, relocated, nicready, wholefile, cuda/shim (the shim's sources and table)
//	record   record (the results format), record/* (a family's rows), fixture (synthetic files for tests)
//	gpu      cuda (the shim's loader, toolchain and fake)
//	runners  harness, launcher, suites/*      (record, gpu, leaf)
//	readers  report, plots, compare, model    (record, leaf)
//	top      cmd/nvshbench, cuda/gputest      (anything)
var layers = []struct {
	name string
	pkgs []string // folders of the module; "x/*" is every folder in x
	may  []string // the lower layers it may import
}{
	{"leaf", []string{"internal/table", "internal/units", "internal/ids", "internal/decide", "internal/lists", "internal/golden", "internal/relocated", "internal/nicready", "internal/wholefile", "cuda/shim"}, nil},
	{"record", []string{"record", "record/*", "internal/fixture"}, []string{"leaf"}},
	{"gpu", []string{"cuda"}, []string{"leaf"}},
	{"runners", []string{"harness", "launcher", "suites/*"}, []string{"leaf", "record", "gpu"}},
	{"readers", []string{"report", "plots", "compare", "model", "verdict"}, []string{"leaf", "record"}},
	{"top", []string{"cmd/nvshbench", "cuda/gputest"}, []string{"leaf", "record", "gpu", "runners", "readers"}},
}

// layerOf names the layer of a folder of the module ("" for none).
func layerOf(pkg string) string {
	for _, l := range layers {
		for _, p := range l.pkgs {
			if ok, _ := path.Match(p, pkg); ok {
				return l.name
			}
		}
	}
	return ""
}

// layerViolations checks an import graph (folder -> the module's folders it
// imports) against the layers.
func layerViolations(graph map[string][]string) []string {
	may := map[string]map[string]bool{}
	for _, l := range layers {
		may[l.name] = map[string]bool{}
		for _, m := range l.may {
			may[l.name][m] = true
		}
		if l.name != "leaf" {
			may[l.name][l.name] = true
		}
	}
	var bad []string
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		from := layerOf(pkg)
		if from == "" {
			bad = append(bad, pkg+": in no layer (add it to layers in layers_test.go and to docs/contributing.md's Layout)")
			continue
		}
		for _, imp := range graph[pkg] {
			to := layerOf(imp)
			if !may[from][to] {
				bad = append(bad, pkg+" ("+from+") imports "+imp+" ("+to+")")
			}
		}
	}
	return bad
}

// importGraph reads the imports of every .go file under root but tests
// (results/, testdata/ and hidden folders aside; every build tag counted):
// folder -> the module's folders it imports.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "results" || n == "testdata" || n == "build" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if _, ok := graph[pkg]; !ok {
			graph[pkg] = nil
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if in, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(graph[pkg], in) {
				graph[pkg] = append(graph[pkg], in)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// The module keeps its layers: no package imports a higher layer or a
// sibling it must not see (a reader the GPU layer or a runner), a leaf
// imports nothing of the module, and every package is in a layer.
func TestPackageLayers(t *testing.T) {
	graph := importGraph(t, "../..")
	for _, want := range []string{"record", "internal/table", "model", "suites/rma", "cmd/nvshbench"} {
		if _, ok := graph[want]; !ok {
			t.Fatalf("the scan found no package %s: it is broken (%d packages)", want, len(graph))
		}
	}
	for _, v := range layerViolations(graph) {
		t.Error(v)
	}
}

// The check catches what it is for.
func TestLayerViolationsFound(t *testing.T) {
	graph := map[string][]string{
		"record":         {"report"},          // a lower layer imports a higher one
		"internal/table": {"internal/units"},  // a leaf imports the module
		"report":         {"cuda", "plots"},   // a reader sees the GPU layer; plots: its own layer, allowed
		"harness":        {"record", "model"}, // a runner imports a reader
		"suites/moe":     {"harness", "cuda"}, // allowed
		"newpkg":         nil,                 // in no layer
	}
	got := strings.Join(layerViolations(graph), "\n")
	for _, want := range []string{"record (record) imports report (readers)", "internal/table (leaf) imports internal/units (leaf)",
		"report (readers) imports cuda (gpu)", "harness (runners) imports model (readers)", "newpkg: in no layer"} {
		if !strings.Contains(got, want) {
			t.Errorf("not flagged: %s\ngot:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 5 {
		t.Errorf("%d violations, want 5:\n%s", n, got)
	}
}
