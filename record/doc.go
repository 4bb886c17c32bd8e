// Package record defines the nvshbench results format and reads and writes it.
//
// A results file is JSON Lines: one header record describing the run (tool,
// host, GPUs, driver and library versions, the NVSHMEM_/NCCL_ environment),
// then one record per measured point, appended and flushed as each point
// finishes, so that an interrupted run still leaves a valid file.
//
// It is the interface between measuring (nvshbench run / reproduce) and
// everything a user reads (report, plot, compare): those commands import this
// package and never the suites or the GPU layer. Values are stored in base
// units (bytes, seconds, bytes per second); renderers scale them.
//
// The package also embeds the published numbers of "Demystifying NVSHMEM"
// (reference.go) and a small measured example file (example.go).
package record
