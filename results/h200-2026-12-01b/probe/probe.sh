#!/usr/bin/env bash
# probe.sh: the first call of the 2026-12-01 (second) session on one H200:
# builds chase_probe.cu with the machine's nvcc and runs it. Run from the
# repository root on the GPU machine; writes into $OUT.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
d=results/h200-2026-12-01b/probe
nvcc -O3 -arch=sm_90 -o /tmp/chase_probe $d/chase_probe.cu || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/nvidia-smi.csv
/tmp/chase_probe | tee $OUT/chase_probe.csv
