#!/usr/bin/env bash
# Smoke run on the H200 test machine: build the shim there, doctor, and a
# short verified RMA run with 1 PE and with 2 PEs on the one GPU.
# Usage (from the repo root, with build/nvshbench built by 'make build'):
#   OUT=/tmp/out results/h200-2026-11-29/smoke.sh
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-smoke}
mkdir -p "$OUT"
B=./build/nvshbench
export NVSHBENCH_CACHE=$PWD/build/cache
nvidia-smi -L
time $B doctor --build > "$OUT/doctor.txt" 2>&1; echo "doctor rc=$?"; cat "$OUT/doctor.txt" | tail -25
time $B run --sizes 4K,1M,64M --samples 3 --timeout 60s --out "$OUT/smoke-1pe.jsonl" rma 2>&1 | tail -40
time $B run --pes-per-gpu 2 --sizes 4K,1M,64M --samples 3 --timeout 60s --out "$OUT/smoke-2pe.jsonl" rma 2>&1 | tail -40
