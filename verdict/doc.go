// Package verdict judges a results file of the pair matrix and the check
// (nvshbench check) for bring-up: PASS, WARN or FAIL for every pair of
// PEs, every GPU, every node and every rank, each with the reason and the
// band it was held to. The bands are the run's own (a pair against the
// median of its node's pairs of the same row and link class, a GPU against
// its node's other GPUs, a node against the others), the in-run physical
// ceiling (NVML's links, Point.Ceiling) and, optionally, a reference band
// per GPU kind and link class (Bands: JSON, each band with its source; one
// derived from the committed runs ships embedded).
//
// It reads results only (record), as report, plot and compare do: it
// never imports the GPU layer, so a file is judged anywhere (check --judge).
package verdict
