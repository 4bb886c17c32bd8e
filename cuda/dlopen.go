package cuda

import (
	"errors"
	"runtime"

	"github.com/ebitengine/purego"
)

// dlopen is purego.Dlopen on one OS thread. purego calls dlopen and then,
// on failure, dlerror as two foreign calls; dlerror's message is the
// calling thread's, and between the two calls the Go scheduler may move the
// goroutine to another thread, whose dlerror is empty: a plugin that did not
// load then said nothing about why (seen as a flaky doctor test, "PMIX does
// not load: " with no reason, on a loaded machine).
func dlopen(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, mode)
	if err != nil && err.Error() == "" {
		err = errors.New("dlopen failed and dlerror gave no reason")
	}
	return h, err
}
