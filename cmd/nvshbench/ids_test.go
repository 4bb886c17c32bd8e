package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// idLiteral is a string that names benchmarks: a suite, then a path.
var idLiteral = regexp.MustCompile(`^(rma|latency|collectives|limit|moe)/[a-z0-9/*_.-]*$`)

// names reports whether lit names at least one registered benchmark: an
// exact ID, a folder ("x/"), a glob, or a family the way the charts and
// selections read it (x, x-…, x/…).
func names(lit string, ids []string) bool {
	for _, id := range ids {
		switch {
		case strings.ContainsAny(lit, "*?["):
			if ok, _ := path.Match(lit, id); ok {
				return true
			}
		case strings.HasSuffix(lit, "/"):
			if strings.HasPrefix(id, lit) {
				return true
			}
		case id == lit || strings.HasPrefix(id, lit+"-") || strings.HasPrefix(id, lit+"/"):
			return true
		}
	}
	return false
}

// Every benchmark ID that report, plots, reproduce and the paper's
// reference data name is registered: a rename cannot silently drop a row,
// a curve or a reproduce step.
func TestEveryNamedBenchmarkIsRegistered(t *testing.T) {
	var ids []string
	for _, b := range harness.All() {
		ids = append(ids, b.ID)
	}
	for _, r := range record.Paper().Rows {
		for _, pat := range r.IDs {
			if !names(pat, ids) {
				t.Errorf("paper.json row %s names %q, which no registered benchmark matches", r.Key, pat)
			}
		}
	}
	fset := token.NewFileSet()
	seen := 0
	for _, dir := range []string{"../../report", "../../plots", "."} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, fn := range files {
			if strings.HasSuffix(fn, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, fn, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				s = strings.TrimPrefix(s, "=") // the charts' exact-ID prefix
				if !idLiteral.MatchString(s) {
					return true
				}
				seen++
				if !names(s, ids) {
					t.Errorf("%s: %q names no registered benchmark", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
	if seen < 50 {
		t.Errorf("only %d benchmark names found in the sources: the scan is broken", seen)
	}
}
