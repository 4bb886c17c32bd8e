package launcher

import "syscall"

// workerAttr puts a worker in its own process group (so the watchdog can
// kill it with everything it started) and has the kernel kill it when the
// controller dies, even by SIGKILL: no worker outlives its controller.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
