package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/record"
)

// idLiteral is a string that names benchmarks: a suite, then a path (after
// the charts' "=" for an exact ID).
var idLiteral = regexp.MustCompile(`^=?(rma|latency|collectives|limit|moe)/[a-z0-9/*_.-]*$`)

// retired are IDs no benchmark has any more that the code still names, each
// with where and why.
var retired = map[string]string{
	"latency/fence": "compare/schema.go: a schema-1 file's name of latency/issue/fence",
}

// idPiece is a later literal of a concatenation that goes on naming an ID;
// a literal with other characters ("collectives/" + c + ": NCCL's own
// choice") starts prose, where the ID ends.
var idPiece = regexp.MustCompile(`^[a-z0-9/_.-]*$`)

// literalSelector reads an ID literal of the sources: a glob where it has
// one's characters, else the charts' notation (ids.Chart: "=x" exactly x,
// "x/" the IDs under x, else x's family: x, x-… and x/…).
func literalSelector(lit string) ids.Selector {
	if strings.ContainsAny(lit, "*?[") {
		return ids.Glob(lit)
	}
	return ids.Chart(lit)
}

// concatenation reads a + chain that starts with an ID literal
// ("rma/" + op + "/" + scope) as a pattern: each operand that is not a
// literal stands for one level's text ([^/]+). It must match the start of
// some ID, ending at the ID's end, a '/' or a '-' (or anywhere when it ends
// in '/'). inner are the chain's literals and shorter chains (checked
// here, not again alone).
func concatenation(e *ast.BinaryExpr) (re *regexp.Regexp, text string, inner []ast.Node) {
	var ops []ast.Expr
	var flat func(x ast.Expr)
	flat = func(x ast.Expr) {
		if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			if b != e {
				inner = append(inner, b)
			}
			flat(b.X)
			flat(b.Y)
			return
		}
		ops = append(ops, x)
	}
	flat(e)
	var pat strings.Builder
	for i, op := range ops {
		lit, ok := op.(*ast.BasicLit)
		s := ""
		if ok && lit.Kind == token.STRING {
			s, _ = strconv.Unquote(lit.Value)
		}
		switch {
		case i == 0 && (!ok || !idLiteral.MatchString(s) || strings.HasPrefix(s, "=")):
			return nil, "", nil // not an ID
		case ok && !idPiece.MatchString(s):
			inner = append(inner, lit)
			goto done
		case ok:
			inner = append(inner, lit)
			pat.WriteString(regexp.QuoteMeta(s))
			text += s
		default:
			pat.WriteString(`[^/]+`)
			text += "…"
		}
	}
done:
	end := `(?:$|[/-])`
	if strings.HasSuffix(text, "/") {
		end = ""
	}
	return regexp.MustCompile("^" + pat.String() + end), text, inner
}

// unnamed scans every non-test .go file under root (but results/, testdata/
// and hidden folders) for benchmark names: string literals that look like
// one, and concatenations that start with one. It returns each that no ID
// of ids matches, and how many it checked.
func unnamed(t *testing.T, root string, all []string) (bad []string, seen int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "results" || n == "testdata" || strings.HasPrefix(n, ".") || n == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		done := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if x.Op != token.ADD || done[x] {
					return true
				}
				re, text, inner := concatenation(x)
				if re == nil {
					return true
				}
				for _, n := range inner {
					done[n] = true
				}
				seen++
				for _, id := range all {
					if re.MatchString(id) {
						return true
					}
				}
				bad = append(bad, fset.Position(x.Pos()).String()+": "+strconv.Quote(text))
			case *ast.BasicLit:
				if x.Kind != token.STRING || done[x] {
					return true
				}
				s, err := strconv.Unquote(x.Value)
				if err != nil || !idLiteral.MatchString(s) || retired[s] != "" {
					return true
				}
				seen++
				if !takesAny(literalSelector(s), all) {
					bad = append(bad, fset.Position(x.Pos()).String()+": "+strconv.Quote(s))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad, seen
}

// takesAny reports whether sel takes one of all.
func takesAny(sel ids.Selector, all []string) bool {
	for _, id := range all {
		if sel.Match(id) {
			return true
		}
	}
	return false
}

func registered() []string {
	var all []string
	for _, b := range harness.All() {
		all = append(all, b.ID)
	}
	return all
}

// Every benchmark ID that the code of any package names (report, plots,
// the model's predictions, the commands, …), alone or at the head of a
// concatenation, and every one the paper's reference data names, is
// registered: a rename cannot silently drop a row, a curve, a prediction
// or a reproduce step.
func TestEveryNamedBenchmarkIsRegistered(t *testing.T) {
	all := registered()
	for _, r := range record.Paper().Rows {
		for _, pat := range r.IDs {
			if !takesAny(ids.Glob(pat), all) { // how RefRow.MatchesID reads it
				t.Errorf("paper.json row %s names %q, which no registered benchmark matches", r.Key, pat)
			}
		}
	}
	bad, seen := unnamed(t, "../..", all)
	for _, b := range bad {
		t.Errorf("%s names no registered benchmark", b)
	}
	if seen < 100 {
		t.Errorf("only %d benchmark names found in the sources: the scan is broken", seen)
	}
}

// The scan catches what it is for: a benchmark renamed under a name the
// model's predictions use, and a concatenation that names nothing.
func TestIDScanCatchesARename(t *testing.T) {
	all := registered()
	var renamed []string
	for _, id := range all {
		if id == "collectives/allreduce/nccl-ring" {
			id = "collectives/allreduce/ring-nccl"
		}
		renamed = append(renamed, id)
	}
	bad, seen := unnamed(t, "../../model", renamed)
	if seen == 0 || len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), "predict.go") {
		t.Errorf("renaming collectives/allreduce/nccl-ring goes unseen in model/predict.go (%d names): %q", seen, bad)
	}
	dir := t.TempDir()
	src := `package x

func f(op, c, sc string) []string {
	return []string{
		"rma/" + op + "/" + sc,             // rma/put/block
		"collectives/" + c + "/",          // collectives/allreduce/
		"collectives/" + c + ": prose",    // collectives/allreduce, then prose
		"rma/" + op + "/nosuch",           // nothing
		"latency/" + op + "/" + sc + "/x", // nothing: one level too deep
		"=rma/put",                        // exactly rma/put: nothing
		"rma/*/block",
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, seen = unnamed(t, dir, all)
	got := strings.Join(bad, "\n")
	if seen != 7 || len(bad) != 3 || !strings.Contains(got, `"rma/…/nosuch"`) || !strings.Contains(got, `"latency/…/…/x"`) || !strings.Contains(got, `"=rma/put"`) {
		t.Errorf("%d names, flagged:\n%s", seen, got)
	}
}
