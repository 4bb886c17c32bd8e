#!/usr/bin/env bash
# The comparisons of NVSHMEM 3.8.0 against 3.4.5 in this folder, from the
# committed results files (run from the repository root after make build).
# Writes compare-1pe.md, compare-2pe.md, compare-lat8.md beside this script.
set -u
B=${NVSHBENCH:-build/nvshbench}
D=$(dirname "$0")
"$B" compare --threshold 10% --format markdown --allow-failed \
  nvshmem-3.4.5=$D/plan-1pe-3.4.5.jsonl.gz nvshmem-3.8.0=$D/plan-1pe-3.8.0.jsonl.gz > $D/compare-1pe.md 2>&1
"$B" compare --threshold 10% --format markdown --allow-failed \
  nvshmem-3.4.5=$D/plan-2pe-3.4.5.jsonl.gz nvshmem-3.8.0=$D/plan-2pe-3.8.0.jsonl.gz > $D/compare-2pe.md 2>&1
# The 8-byte latency rows four times, in the order they ran: 3.4.5, 3.8.0
# (the plan's), then 3.8.0, 3.4.5 again (the order reversed).
"$B" compare --threshold 10% --format markdown --allow-failed \
  3.4.5-first=$D/plan-1pe-3.4.5.jsonl.gz 3.8.0-first=$D/plan-1pe-3.8.0.jsonl.gz \
  3.8.0-again=$D/lat8-3.8.0.jsonl.gz 3.4.5-again=$D/lat8-3.4.5.jsonl.gz > $D/compare-lat8.md 2>&1
python3 $D/moved.py $D/compare-1pe.md $D/compare-2pe.md > $D/moved.txt
