package record

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Labels names each file for tables, legends and messages (one rule for
// report, plot and model): its label where it has one (the header's, set by
// run --label, or LABEL=FILE on the command line), else the shortest ending
// of its path that tells it from the other inputs. Where files share their
// base name, the name says nothing and is left out: a/results.jsonl and
// b/results.jsonl are "a" and "b" (what reproduce writes is always
// results.jsonl); x/a/results.jsonl and y/a/results.jsonl are "x/a" and
// "y/a". Files Labels cannot tell apart keep one label: CheckLabels refuses
// them.
func Labels(files []*File) []string {
	out := make([]string, len(files))
	parts := make([][]string, len(files))
	k := make([]int, len(files)) // path components used (0: a label of its own)
	for i, f := range files {
		if f.Header.Label != "" {
			out[i] = f.Header.Label
			continue
		}
		parts[i] = pathParts(f.Name)
		k[i] = 1
	}
	suffix := func(i, n int) string { return strings.Join(parts[i][len(parts[i])-n:], "/") }
	for i := range files {
		if k[i] > 0 {
			out[i] = suffix(i, 1)
		}
	}
	// Lengthen the endings that collide until they differ or are whole.
	for changed := true; changed; {
		changed = false
		count := tally(out)
		for i := range files {
			if k[i] > 0 && count[out[i]] > 1 && k[i] < len(parts[i]) {
				k[i]++
				out[i] = suffix(i, k[i])
				changed = true
			}
		}
	}
	// A base name another input shares tells nothing: drop it where what is
	// left still tells the files apart.
	base := map[string]int{}
	for i := range files {
		if k[i] > 0 {
			base[parts[i][len(parts[i])-1]]++
		}
	}
	short := append([]string(nil), out...)
	for i := range files {
		if k[i] >= 2 && base[parts[i][len(parts[i])-1]] >= 2 {
			short[i] = strings.Join(parts[i][len(parts[i])-k[i]:len(parts[i])-1], "/")
		}
	}
	for changed := true; changed; {
		changed = false
		count := tally(short)
		for i := range short {
			if count[short[i]] > 1 && short[i] != out[i] {
				short[i], changed = out[i], true
			}
		}
	}
	return short
}

// tally counts how often each label occurs.
func tally(labels []string) map[string]int {
	count := map[string]int{}
	for _, l := range labels {
		count[l]++
	}
	return count
}

// pathParts splits a file's name into its path's components (cleaned, so
// that ./a/x.jsonl and a/x.jsonl are one file).
func pathParts(name string) []string {
	var out []string
	for _, p := range strings.Split(filepath.ToSlash(filepath.Clean(name)), "/") {
		if p != "" && p != "." {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []string{name}
	}
	return out
}

// CheckLabels refuses inputs that Labels cannot tell apart: two files
// given one label, or one file named twice. Their rows, columns and curves
// would merge or hide one another.
func CheckLabels(files []*File) error {
	labels := Labels(files)
	first := map[string]int{}
	for i, l := range labels {
		j, seen := first[l]
		if !seen {
			first[l] = i
			continue
		}
		if files[i].Header.Label == "" && files[j].Header.Label == "" {
			return fmt.Errorf("%s is named twice: give each input once (or label them apart: a=FILE b=FILE)", files[i].Name)
		}
		return fmt.Errorf("two inputs are labelled %q (%s and %s): label them apart, e.g. a=%s b=%s", l, files[j].Name, files[i].Name, files[j].Name, files[i].Name)
	}
	return nil
}
