package wholefile

import (
	"os"
	"path/filepath"
	"testing"
)

// A write that fails (here the rename: the name is a folder with files)
// leaves nothing beside the name; one that succeeds replaces a link, not
// the file it points at.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	busy := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(busy, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(busy, []byte("x"), 0o644); err == nil {
		t.Error("a folder with files was replaced")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside it: %v", ents)
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("theirs"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("ours"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if b, _ := os.ReadFile(target); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o755 || string(b) != "theirs" {
		t.Errorf("link %v %v, target %q", st.Mode(), err, b)
	}
}
