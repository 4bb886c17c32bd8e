#!/bin/bash
# The runs behind results/h200-2026-12-02 (one H200, the nvidia-h200 machine): SHIM is the CUDA library built for
# the machine's NVSHMEM 3.4.5 / NCCL 2.28.9 (`nvshbench build-shim`), carried with the binary.
set -eu
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
SHIM=${SHIM:?the built libnvshbench.so}
NB=${NB:-nvshbench}
mkdir -p persm
$NB run --shim "$SHIM" persm/st persm/st1 persm/tma persm/put persm/nccl-lsa persm/ce persm/tma/stage-offset \
  persm/tma/beside-mma persm/put/beside-mma persm/st/beside-mma persm/compute/mma persm/compute/mma/beside-tma \
  persm/compute/mma/beside-put persm/compute/mma/beside-st \
  --sizes 256M,1G --sm-budgets 1,4,16,32,66,all --samples 5 --warmup 1 --timeout 60s \
  --out persm/persm-peaks.jsonl --label persm-peaks
gzip -9 persm/persm-peaks.jsonl
$NB reproduce --quick --shim "$SHIM" --label h200-2026-12-02-quick --out reproduce
gzip -9 reproduce/results.jsonl
# the bring-up check over 2 PEs of the one GPU (functional: no link is crossed), commit 9306b05
mkdir -p check
$NB check --shim "$SHIM" --pes-per-gpu 2 --matrix-size 64M --sizes 1M --out check/check-2pe.jsonl
gzip -9 check/check-2pe.jsonl
