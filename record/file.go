package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// File is a parsed results file.
type File struct {
	Name     string // path or label it was read from
	Header   Header
	Points   []Point
	Warnings []string // e.g. a truncated last line
	// Duplicates name the points measured more than once in the file
	// (two records of one point, neither an error: two runs mixed, or a
	// hand-merged file); readers say so, compare refuses to pick one.
	Duplicates []string
}

// Writer appends records to a results file, flushing each one.
type Writer struct {
	f    *os.File
	name string
	h    Header // the file's header: what each point's flags are derived from
}

// Create creates path exclusively (it never overwrites an existing file),
// locks it for this run and writes the header. The directory is created if
// needed.
func Create(path string, h Header) (*Writer, error) {
	if strings.HasSuffix(path, ".gz") {
		return nil, fmt.Errorf("%s: a run writes plain JSONL, a record at a time (nothing lost if it is cut short); gzip the file when the run is done, every reader takes .gz", path)
	}
	if err := Usable(path); err != nil {
		return nil, err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, &Unusable{fmt.Sprintf("%s: its folder cannot be made (%v): pass an --out in a folder you can write", path, err)}
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s already exists: results are never overwritten; choose another --out", path)
		}
		return nil, err
	}
	if err := lock(f, path); err != nil {
		f.Close()
		return nil, err
	}
	h.Type = TypeHeader
	if h.Schema == 0 {
		h.Schema = SchemaVersion
	}
	w := &Writer{f: f, name: path, h: h}
	if err := w.write(h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// InUse says that another run holds a results file.
type InUse struct {
	File string
	PID  int // 0: unknown
}

func (e *InUse) Error() string {
	who := "another run"
	if e.PID > 0 {
		who = fmt.Sprintf("another run (PID %d)", e.PID)
	}
	return fmt.Sprintf("%s is being written by %s: one run per results file; wait for it, or choose another --out", e.File, who)
}

// lock takes this run's exclusive lock on the results file itself (flock:
// it stays with this open file, whatever else opens the path), or says who
// holds it.
func lock(f *os.File, path string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &InUse{File: path, PID: flockHolder(f)}
		}
		return fmt.Errorf("locking %s: %w", path, err)
	}
	return nil
}

// flockHolder finds the process holding a flock on f's file in
// /proc/locks (0 when it cannot tell).
func flockHolder(f *os.File) int {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		// 1: FLOCK  ADVISORY  WRITE 12345 fd:01:1234567 0 EOF
		fs := strings.Fields(line)
		if len(fs) < 6 || fs[1] != "FLOCK" {
			continue
		}
		parts := strings.Split(fs[5], ":")
		if len(parts) != 3 {
			continue
		}
		if ino, err := strconv.ParseUint(parts[2], 10, 64); err == nil && ino == sys.Ino {
			pid, _ := strconv.Atoi(fs[4])
			return pid
		}
	}
	return 0
}

// Unusable says why a path cannot be a run's results file (exit 2: the
// user named the wrong thing).
type Unusable struct{ Why string }

func (e *Unusable) Error() string { return e.Why }

// Regular refuses a path that exists and is not a plain file (a FIFO, a
// device, a folder, a symbolic link: a run would block on it, or write
// somewhere the user did not name).
func Regular(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return nil // absent: created
	}
	switch m := st.Mode(); {
	case m&os.ModeSymlink != 0:
		return &Unusable{fmt.Sprintf("%s is a symbolic link: name the results file itself", path)}
	case m.IsDir():
		return &Unusable{fmt.Sprintf("%s is a folder, not a results file", path)}
	case !m.IsRegular():
		return &Unusable{fmt.Sprintf("%s is not a regular file (%s): a results file is a plain file", path, m.Type())}
	}
	return nil
}

// Usable refuses, before anything is written, a path that cannot become a
// results file: a name ending in / (a folder), one below a file, or what
// Regular refuses. A missing folder is fine: Create makes it.
func Usable(path string) error {
	if path == "" {
		return nil
	}
	if strings.HasSuffix(path, "/") {
		return &Unusable{fmt.Sprintf("%s names a folder: a run writes one results file; pass a file name such as %s", path, filepath.Join(path, "results.jsonl"))}
	}
	if err := Regular(path); err != nil {
		return err
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return &Unusable{fmt.Sprintf("%s: %s is a file, not a folder: pass an --out in a folder", path, dir)}
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || dir == filepath.Dir(dir) {
			return nil // Create says what is wrong
		}
	}
}

// Append opens an existing results file to add points (resuming a run),
// after taking this run's lock on it. A last line cut short by an
// interrupted run is cut off first, so the file stays valid; a complete
// last record without its newline is kept and the newline added. A
// compressed file is refused: appending would destroy its stream.
func Append(path string) (*Writer, *File, error) { return Reader{}.Append(path) }

// Append is Append that reads the existing file with rd.
func (rd Reader) Append(path string) (*Writer, *File, error) {
	if err := Regular(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Writer, *File, error) {
		f.Close()
		return nil, nil, err
	}
	if err := lock(f, path); err != nil {
		return fail(err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fail(err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		return fail(&Unusable{fmt.Sprintf("%s is gzip-compressed: a run appends plain records, which would destroy it; choose a new --out (readers take the compressed file as it is)", path)})
	}
	rf, err := rd.Read(bytes.NewReader(data), path)
	if err != nil {
		// The user named a file no run can go on with: nothing is touched.
		return fail(&Unusable{fmt.Sprintf("%v: not resumed; move it away or pass a new --out", err)})
	}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		last := data[bytes.LastIndexByte(data, '\n')+1:]
		if complete(last) {
			if _, err := f.WriteAt([]byte{'\n'}, int64(n)); err != nil {
				return fail(err)
			}
		} else if err := f.Truncate(int64(n - len(last))); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return fail(err)
	}
	return &Writer{f: f, name: path, h: rf.Header}, rf, nil
}

// complete reports whether a last line without its newline is a whole
// record (it parses and validates).
func complete(line []byte) bool {
	var probe struct{ Type string }
	if json.Unmarshal(line, &probe) != nil || probe.Type != TypePoint {
		return false
	}
	var p Point
	return json.Unmarshal(line, &p) == nil && p.Validate() == nil
}

// Name is the path being written.
func (w *Writer) Name() string { return w.name }

// WritePoint validates and appends one point, its flags derived from the
// file's header, then syncs it to disk.
func (w *Writer) WritePoint(p Point) error {
	p.Type = TypePoint
	Annotate(&w.h, &p)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid point: %w", err)
	}
	return w.write(p)
}

func (w *Writer) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("writing %s: %w", w.name, err)
	}
	return w.f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Reader reads results files. Metrics names the metrics a benchmark's
// points carry (the benchmark registry knows them: harness.Metrics): a
// point stored without its metrics (samples kept) gets these derived from
// its samples, so report, plot and compare see the one derivation. Nil, or
// nil for an ID, gives the ones the record itself can give: latency, and
// bandwidth, algbw, busbw and link bandwidth where it counts bytes, a bus
// factor or remote bytes. Code gives each point what its benchmark
// declares its code runs (Point.Code; harness.CodeOf): nil, or false for an
// ID, leaves it unknown.
type Reader struct {
	Metrics func(id string) []string
	Code    func(id string) (Code, bool)
}

// ReadFile reads and validates a results file (Reader{}.ReadFile).
func ReadFile(path string) (*File, error) { return Reader{}.ReadFile(path) }

// Read parses a results file from r (Reader{}.Read).
func Read(r io.Reader, name string) (*File, error) { return Reader{}.Read(r, name) }

// ReadFile reads and validates a results file.
func (rd Reader) ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", path)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a results file", path)
	}
	return rd.Read(f, path)
}

// maxLine bounds one record (raw samples of a point included).
const maxLine = 64 << 20

// Read parses a results file from r; name is used in messages. A malformed
// line is an error naming the file and line. A last line cut short (an
// interrupted run) is dropped with a warning. A gzip-compressed file
// (results.jsonl.gz, told by its magic bytes, not its name) reads the same:
// finished runs keep their raw samples at a tenth of the size.
func (rd Reader) Read(r io.Reader, name string) (*File, error) {
	out := &File{Name: name}
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip-compressed, but not readable: %v", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	lineNo := 0
	sawHeader := false
	seen := map[string]int{} // a measured point's line
	for {
		line, err := readLine(br)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s:%d: the compressed data ends early (a damaged or partly copied .gz)", name, lineNo+1)
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %v", name, lineNo+1, err)
		}
		complete := err == nil // a line ended by '\n'
		if len(line) == 0 && !complete {
			break
		}
		lineNo++
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if !complete {
				break
			}
			continue
		}
		n := len(out.Points)
		perr := rd.parseLine(out, trimmed, &sawHeader)
		if perr == nil && len(out.Points) > n {
			if p := &out.Points[n]; p.Status != StatusError {
				if first, dup := seen[p.MatchKey()]; dup {
					d := fmt.Sprintf("%s:%d: point %s %s was already measured at line %d", name, lineNo, p.ID, p.Params.Key(), first)
					out.Duplicates = append(out.Duplicates, d)
					out.Warnings = append(out.Warnings, d)
				} else {
					seen[p.MatchKey()] = lineNo
				}
			}
		}
		if perr != nil {
			var se *SchemaError
			if errors.As(perr, &se) {
				return nil, fmt.Errorf("%s: %w", name, perr)
			}
			if !complete && sawHeader {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s:%d: last line is incomplete (interrupted run?); ignored", name, lineNo))
				break
			}
			if !complete && !sawHeader && !json.Valid(trimmed) {
				return nil, fmt.Errorf("%s:%d: the header record is cut short (the run that made the file stopped as it started): no results in it", name, lineNo)
			}
			return nil, fmt.Errorf("%s:%d: %v", name, lineNo, perr)
		}
		if !complete {
			break
		}
	}
	if !sawHeader {
		return nil, fmt.Errorf("%s: empty file, not a results file (no header record)", name)
	}
	MarkShapes(out.Points)     // a shape needs the series: known once every point is read
	MarkClocks(out.Points)     // so does the run's clock
	MarkTimerTwins(out.Points) // an older file's two timers are two rows
	return out, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			return buf[:len(buf)-1], nil
		}
		return buf, err
	}
}

func (rd Reader) parseLine(out *File, line []byte, sawHeader *bool) error {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return fmt.Errorf("malformed JSON: %v", shortJSONErr(err))
	}
	if !*sawHeader {
		if probe.Type != TypeHeader {
			if probe.Type == "" {
				return fmt.Errorf("not a results file: first record has no \"type\" (want a header record)")
			}
			return fmt.Errorf("not a results file: first record is %q, want a header", probe.Type)
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&out.Header); err != nil {
			return fmt.Errorf("malformed header: %v", shortJSONErr(err))
		}
		if err := out.Header.Validate(); err != nil {
			return err
		}
		*sawHeader = true
		return nil
	}
	switch probe.Type {
	case TypePoint:
		var p Point
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("malformed point: %v", shortJSONErr(err))
		}
		if err := p.Validate(); err != nil {
			return err
		}
		upgrade(&out.Header, &p)
		if err := deriveMissing(&p, rd.Metrics); err != nil {
			return err
		}
		if w := p.Rederive(); w != "" {
			out.Warnings = append(out.Warnings, w)
		}
		cacheRule(&out.Header, &p)
		Annotate(&out.Header, &p)
		if rd.Code != nil {
			if c, ok := rd.Code(p.ID); ok {
				p.Code = &c
			}
		}
		out.Points = append(out.Points, p)
		return nil
	case TypeHeader:
		return fmt.Errorf("a second header record (files concatenated?)")
	default:
		return fmt.Errorf("unknown record type %q", probe.Type)
	}
}

func shortJSONErr(err error) string {
	s := err.Error()
	return strings.TrimPrefix(s, "json: ")
}

// cacheRule applies the cache rule (CacheServed: a buffer up to
// CacheMargin × the smallest L2 of the job's GPUs) to a point whose figures
// move bytes, whatever its writer marked: a schema-1 writer marked only
// buffers within one L2 (a bandwidth at 64 MiB on an H200's 60 MiB), and
// earlier schema-2 writers exempted MoE dispatch and combine (their tokens
// within twice the L2 are read back from it). It only adds the mark: a
// grid that runs in waves records the share its resident CTAs loop over as
// its working set, so the rule gives its writer's answer.
func cacheRule(h *Header, p *Point) {
	if p.L2Resident || !p.MovesBytes() {
		return
	}
	var l2 int64
	for _, g := range h.GPUs {
		if g.L2Bytes > 0 && (l2 == 0 || g.L2Bytes < l2) {
			l2 = g.L2Bytes
		}
	}
	p.L2Resident = CacheServed(p.WorkingSetBytes, l2)
}
