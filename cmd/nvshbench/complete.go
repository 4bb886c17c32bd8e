package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/harness"
)

// benchmarkCompletion completes benchmark IDs and their prefixes (rma,
// rma/put, rma/put/block), the words run and list accept.
func benchmarkCompletion(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done := map[string]bool{}
	for _, a := range args {
		done[a] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range harness.All() {
		parts := strings.Split(b.ID, "/")
		for i := 1; i <= len(parts); i++ {
			w := strings.Join(parts[:i], "/")
			if seen[w] || done[w] || !strings.HasPrefix(w, toComplete) {
				continue
			}
			seen[w] = true
			desc := "prefix"
			if i == len(parts) {
				desc = b.Desc
				if r := []rune(desc); len(r) > 70 {
					desc = string(r[:69]) + "…"
				}
			}
			out = append(out, w+"\t"+desc)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// listCompletion completes a comma-separated list flag from choices,
// keeping what is already typed before the last comma.
func listCompletion(choices []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		head, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			head, last = toComplete[:i+1], toComplete[i+1:]
		}
		used := map[string]bool{}
		for _, u := range strings.Split(head, ",") {
			used[u] = true
		}
		var out []string
		for _, c := range choices {
			if !used[c] && strings.HasPrefix(c, last) {
				out = append(out, head+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
