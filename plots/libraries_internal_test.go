package plots

import (
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// Every chart's caption names the libraries its numbers come from: one set
// for files that share it, each file's where they differ, nothing where no
// header says.
func TestLibrariesNote(t *testing.T) {
	file := func(label, nvshmem, nccl string) *record.File {
		return &record.File{Name: label + ".jsonl", Header: record.Header{Label: label, NVSHMEM: nvshmem, NCCL: nccl}}
	}
	for _, c := range []struct {
		files []*record.File
		want  string
	}{
		{[]*record.File{file("a", "3.4.5", "2.28.9"), file("b", "3.4.5", "2.28.9")}, "libraries: NVSHMEM 3.4.5, NCCL 2.28.9"},
		{[]*record.File{file("a", "3.4.5", "2.28.9"), file("b", "3.8.0", "2.28.9")}, "libraries: a: NVSHMEM 3.4.5, NCCL 2.28.9; b: NVSHMEM 3.8.0, NCCL 2.28.9"},
		{[]*record.File{file("a", "", "")}, ""},
	} {
		if got := librariesNote(c.files); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
