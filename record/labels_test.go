package record

import (
	"strings"
	"testing"
)

func named(names ...string) []*File {
	var out []*File
	for _, n := range names {
		f := &File{Name: n}
		if l, p, ok := strings.Cut(n, "="); ok {
			f.Name, f.Header.Label = p, l
		}
		out = append(out, f)
	}
	return out
}

// Issue 30: two files named results.jsonl (what reproduce always writes)
// get labels that tell them apart, from the shortest path ending that does.
func TestLabels(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"a/results.jsonl", "b/results.jsonl"}, "a b"},
		{[]string{"runs/h200/reproduce/results.jsonl.gz", "runs/h100/reproduce/results.jsonl.gz"}, "h200/reproduce h100/reproduce"},
		{[]string{"x/one.jsonl", "y/two.jsonl"}, "one.jsonl two.jsonl"},
		{[]string{"./a/results.jsonl", "/abs/b/results.jsonl", "c.jsonl"}, "a b c.jsonl"},
		{[]string{"base=a/results.jsonl", "b/results.jsonl"}, "base results.jsonl"},
		{[]string{"results.jsonl", "x/results.jsonl"}, "results.jsonl x"},
		// a shortened name that would meet another's label keeps its base
		{[]string{"a=q/r.jsonl", "a/r.jsonl", "b/r.jsonl"}, "a a/r.jsonl b"},
	} {
		files := named(c.in...)
		if got := strings.Join(Labels(files), " "); got != c.want {
			t.Errorf("%v: labels %q, want %q", c.in, got, c.want)
		}
		if err := CheckLabels(files); err != nil {
			t.Errorf("%v: %v", c.in, err)
		}
	}
}

// Two inputs with one label, or one file named twice, are refused: their
// rows and curves would merge.
func TestCheckLabelsRefusesTwins(t *testing.T) {
	for in, want := range map[string]string{
		"x=a.jsonl x=b.jsonl":         `two inputs are labelled "x"`,
		"a/r.jsonl ./a/r.jsonl":       "a/r.jsonl is named twice",
		"run=a/r.jsonl run=b/r.jsonl": "label them apart",
	} {
		err := CheckLabels(named(strings.Fields(in)...))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
