//go:build !linux

package launcher

import "syscall"

// workerAttr puts a worker in its own process group; off Linux the worker's
// own watch on its parent ends it when the controller dies.
func workerAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
