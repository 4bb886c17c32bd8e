// Package lists holds small helpers on slices that several packages need
// and that the standard library lacks.
package lists

// Unique drops repeated items, keeping the first of each, in order.
func Unique(items []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}
