// Package gputest holds the GPU tests (build tag gpu): every RMA op run
// through the real shim and the real launcher with 1 PE, and with 2 PEs on
// one GPU, each transfer verified. 'make gpu-test' builds them into a test
// binary that runs on a GPU machine without a Go toolchain; without a GPU
// or shim they skip with a visible message.
package gputest
