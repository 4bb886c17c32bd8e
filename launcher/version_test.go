package launcher

import (
	"strings"
	"testing"
)

// The header records the library as the job loaded it: a folder given by
// NVSHMEM_HOME has no version the toolchain could find ("" then), and a
// loaded version other than the one found is recorded and said.
func TestLoadedVersionIsRecorded(t *testing.T) {
	for _, c := range []struct {
		found, loaded, want string
		note                bool
	}{
		{"", "3.8.0", "3.8.0", false},
		{"3.4.5", "3.4.5", "3.4.5", false},
		{"3.4.5", "3.8.0", "3.8.0", true},
		{"3.4.5", "", "3.4.5", false},
	} {
		got, notes := LoadedVersion("NVSHMEM", c.found, c.loaded, nil)
		if got != c.want || (len(notes) > 0) != c.note {
			t.Errorf("found %q loaded %q: %q, notes %q", c.found, c.loaded, got, notes)
		}
		if c.note && !strings.Contains(notes[0], "found 3.4.5, the job loaded 3.8.0") {
			t.Errorf("note %q", notes[0])
		}
	}
}
