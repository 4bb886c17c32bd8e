package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's "Which should I use?" is the output of the command it names,
// not text typed by hand: regenerated here and compared.
func TestReadmeGuideIsTheCommandsOutput(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const begin, end = "<!-- model-guide:begin -->\n", "\n<!-- model-guide:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i || !strings.Contains(s, "nvshbench model --guide --format markdown --example") {
		t.Fatal("README lacks the generated guide block or the command that makes it")
	}
	out, stderr, code := nvshbench(t, "model", "--guide", "--format", "markdown", "--example")
	if code != 0 {
		t.Fatalf("model: exit %d: %s", code, stderr)
	}
	if got := s[i+len(begin) : j]; got != strings.TrimSpace(out) {
		t.Errorf("README's guide differs from the command's output; regenerate it:\n%s", out)
	}
}
