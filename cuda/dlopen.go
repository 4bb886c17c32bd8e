package cuda

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// dlopen is purego.Dlopen on one OS thread, of a file checked first when
// it is named by its path (CheckLibrary). purego calls dlopen and then, on
// failure, dlerror as two foreign calls; dlerror's message is the calling
// thread's, and between the two calls the Go scheduler may move the
// goroutine to another thread, whose dlerror is empty: a plugin that did
// not load then said nothing about why (seen as a flaky doctor test, "PMIX
// does not load: " with no reason, on a loaded machine).
func dlopen(path string, mode int) (uintptr, error) {
	if strings.ContainsRune(path, '/') {
		if err := CheckLibrary(path); err != nil {
			return 0, err
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, mode)
	if err != nil && err.Error() == "" {
		err = errors.New("dlopen failed and dlerror gave no reason")
	}
	return h, err
}

// hostMachine is the ELF machine this process runs on.
var hostMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "ppc64le": elf.EM_PPC64}[runtime.GOARCH]

// machineNames are the ELF machines in the words of their makers.
var machineNames = map[elf.Machine]string{elf.EM_X86_64: "x86-64", elf.EM_AARCH64: "AArch64", elf.EM_PPC64: "POWER", elf.EM_386: "x86 (32-bit)"}

func machineName(m elf.Machine) string {
	if n, ok := machineNames[m]; ok {
		return n
	}
	return m.String()
}

// CheckLibrary refuses, before the loader sees it, a file it would crash
// on or could not run: one cut short (the loader maps each segment whole,
// and touching the pages past the end of the file is SIGBUS: a crash of
// this process, not an error), one built for another machine, or no shared
// library. A file that cannot be opened is left to dlopen to explain.
func CheckLibrary(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	size := uint64(st.Size())
	r := io.NewSectionReader(f, 0, st.Size())
	var ident [elf.EI_NIDENT]byte
	if _, err := io.ReadFull(r, ident[:]); err != nil || string(ident[:4]) != elf.ELFMAG {
		return fmt.Errorf("%s: not an ELF shared library (%d bytes)", path, size)
	}
	if c, d := elf.Class(ident[elf.EI_CLASS]), elf.Data(ident[elf.EI_DATA]); c != elf.ELFCLASS64 || d != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: an ELF file of class %v, %v: this machine loads 64-bit little-endian ones", path, c, d)
	}
	truncated := func(what string, end uint64) error {
		return fmt.Errorf("%s: truncated: %d bytes, and its %s ends at byte %d (a copy cut short? install it again)", path, size, what, end)
	}
	var h elf.Header64
	if err := binary.Read(io.NewSectionReader(f, 0, st.Size()), binary.LittleEndian, &h); err != nil {
		return truncated("ELF header", uint64(binary.Size(h)))
	}
	if m := elf.Machine(h.Machine); m != hostMachine {
		return fmt.Errorf("%s: built for %s, this machine is %s", path, machineName(m), machineName(hostMachine))
	}
	if t := elf.Type(h.Type); t != elf.ET_DYN {
		return fmt.Errorf("%s: an ELF file of type %v, not a shared library", path, t)
	}
	if end := h.Phoff + uint64(h.Phnum)*uint64(h.Phentsize); end > size {
		return truncated("program header table", end)
	}
	for i := uint64(0); i < uint64(h.Phnum); i++ {
		var p elf.Prog64
		if err := binary.Read(io.NewSectionReader(f, int64(h.Phoff+i*uint64(h.Phentsize)), int64(h.Phentsize)), binary.LittleEndian, &p); err != nil {
			return truncated("program header table", h.Phoff+(i+1)*uint64(h.Phentsize))
		}
		if end := p.Off + p.Filesz; end > size {
			return truncated(fmt.Sprintf("%v segment", elf.ProgType(p.Type)), end)
		}
	}
	return nil
}
