// Package ids selects benchmark IDs. An ID is a path of lowercase words
// (rma/put/block, collectives/allreduce/nccl-ring); every place that asks
// "which IDs does this pattern take" (run's arguments, the charts, the
// paper's reference rows, the model's guide) builds a Selector here, so
// the rules are written once. A leaf: it imports no other nvshbench
// package.
//
// The rules, for a text x:
//
//	Exact(x)     the ID x itself
//	Under(x)     the IDs in folder x: rma and rma/ both take rma/put/block,
//	             neither takes rma or rma-x
//	Glob(x)      path.Match: * and ? stay within one level (rma/*/block);
//	             a malformed pattern takes nothing
//	Variants(x)  x and its dashed variants: rma/p takes rma/p and rma/p-x,
//	             not rma/put nor rma/p/x
//	Family(x)    Variants(x) and Under(x): rma/put takes rma/put,
//	             rma/put-signal/block and rma/put/block
//	All()        every ID
//	Any(s...)    what any of s takes (none: nothing)
//
// and the notations the callers write:
//
//	Pattern(x)   run's argument: Exact, Under or Glob
//	Chart(x)     a chart's prefix: "" All, "=x" Exact(x), "x/" Under(x),
//	             else Family(x)
package ids

import (
	"path"
	"strconv"
	"strings"
)

type rule int

const (
	none rule = iota
	all
	exact
	under
	glob
	variants
	anyOf
)

// Selector takes some benchmark IDs. The zero Selector takes none.
type Selector struct {
	rule rule
	text string
	or   []Selector
}

// Exact takes the ID id.
func Exact(id string) Selector { return Selector{rule: exact, text: id} }

// Under takes the IDs in folder dir (with or without its trailing '/').
func Under(dir string) Selector {
	return Selector{rule: under, text: strings.TrimSuffix(dir, "/") + "/"}
}

// Glob takes the IDs path.Match matches with pattern.
func Glob(pattern string) Selector { return Selector{rule: glob, text: pattern} }

// Variants takes name and the IDs that are name, a dash, and more.
func Variants(name string) Selector { return Selector{rule: variants, text: name} }

// Family takes name, its dashed variants and the IDs under it.
func Family(name string) Selector { return Any(Variants(name), Under(name)) }

// All takes every ID.
func All() Selector { return Selector{rule: all} }

// Any takes what any of sels takes.
func Any(sels ...Selector) Selector { return Selector{rule: anyOf, or: sels} }

// Pattern reads a pattern of run's command line: an exact ID, a folder
// ending at a '/' boundary ("rma" or "rma/put"), or a glob ("rma/*/block").
func Pattern(pat string) Selector { return Any(Exact(pat), Under(pat), Glob(pat)) }

// Chart reads one of a chart's prefixes: "" takes every ID, "=x" the ID x,
// "x/" the IDs under x, anything else x's family (rma/p: rma/p and rma/p-…
// and rma/p/…, not rma/put).
func Chart(pre string) Selector {
	switch {
	case pre == "":
		return All()
	case strings.HasPrefix(pre, "="):
		return Exact(pre[1:])
	case strings.HasSuffix(pre, "/"):
		return Under(pre)
	}
	return Family(pre)
}

// Match reports whether s takes id.
func (s Selector) Match(id string) bool {
	switch s.rule {
	case all:
		return true
	case exact:
		return id == s.text
	case under:
		return strings.HasPrefix(id, s.text)
	case glob:
		ok, _ := path.Match(s.text, id)
		return ok
	case variants:
		return id == s.text || strings.HasPrefix(id, s.text+"-")
	case anyOf:
		for _, o := range s.or {
			if o.Match(id) {
				return true
			}
		}
	}
	return false
}

// Rest is what follows the folder in an ID that Under(dir) takes: Under
// ("collectives/allreduce/").Rest("collectives/allreduce/nccl") is "nccl".
// For any other selector, or an ID it does not take, it is "".
func (s Selector) Rest(id string) string {
	if s.rule != under || !s.Match(id) {
		return ""
	}
	return id[len(s.text):]
}

// String writes the selector in the rules' words: Under("rma/"),
// Any(Exact("a"), Glob("b/*")).
func (s Selector) String() string {
	switch s.rule {
	case all:
		return "All()"
	case anyOf:
		parts := make([]string, len(s.or))
		for i, o := range s.or {
			parts[i] = o.String()
		}
		return "Any(" + strings.Join(parts, ", ") + ")"
	case none:
		return "None"
	}
	name := map[rule]string{exact: "Exact", under: "Under", glob: "Glob", variants: "Variants"}[s.rule]
	return name + "(" + strconv.Quote(s.text) + ")"
}
