#!/usr/bin/env bash
# The GPU session of 2026-12-01 (second): one H200. Run from the repository
# root on the GPU machine with the binaries carried in build/carry.tar.xz
# (build/nvshbench, build/gpu.test and build/libnvshbench.so of this commit,
# built on a machine without a GPU with CGO_ENABLED=0 and the pip CUDA
# toolchain: the shim is a "login-node" shim whose NVSHMEM lives elsewhere
# there; build/old/ the binary and shim of 53d8fe9, this session's start).
#
# Steps ($STEPS, in order):
#   test full beforeafter  the steps of results/h200-2026-12-01/session.sh
#                          (make gpu-test's binary, reproduce, old/new/old)
#   chase                  the plain CUDA chase (probe/chase_probe.cu) beside
#                          the floors of the reproduce just made
#   mpirun                 doctor's bootstrap lines and `mpirun -np 2 nvshbench
#                          run` (2 PEs on the GPU) with the carried shim
# Everything lands in $OUT/bundle.tar.xz (the shared steps' files) and
# $OUT/own.tar.xz (this script's).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
D=results/h200-2026-12-01b
[ -f build/carry.tar.xz ] && tar -C build -xJf build/carry.tar.xz && rm -f build/carry.tar.xz
export WORK=${WORK:-/tmp/nvshbench-session}
W2=$WORK/own; mkdir -p "$W2"
own() { tar -C "$W2" -cJf "$OUT/own.tar.xz" .; }
trap own EXIT
STEPS=${STEPS:-test full chase mpirun}
shared=""
for s in $STEPS; do case $s in test|full|beforeafter) shared="$shared $s" ;; esac; done
if [ -n "$shared" ]; then
  STEPS="$shared" bash results/h200-2026-12-01/session.sh
fi
B=$PWD/build/nvshbench
for s in $STEPS; do
  case $s in
  chase)
    nvcc -O3 -arch=sm_90 -o /tmp/chase_probe $D/probe/chase_probe.cu && timeout 120 /tmp/chase_probe > "$W2/chase_probe.csv" 2>&1
    echo "chase rc=$?"; cat "$W2/chase_probe.csv" ;;
  mpirun)
    # The carried shim was built where NVSHMEM sat in another folder: no
    # LD_LIBRARY_PATH, nvshbench finds this machine's NVSHMEM itself and
    # points every rank at its bootstrap plugin by full path.
    (
      unset LD_LIBRARY_PATH
      export NVSHBENCH_PYTHON=/opt/torch/.venv/bin/python3
      timeout 60 "$B" doctor --shim build/libnvshbench.so > "$W2/doctor-loginshim.txt" 2>&1
      echo "doctor rc=$?"; grep -A7 "bootstraps under" "$W2/doctor-loginshim.txt"
      timeout 240 mpirun --allow-run-as-root -np 2 -x NVSHBENCH_PYTHON -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE \
        -x TORCH_SYMM_MEM_DISABLE_MULTICAST "$B" run --shim build/libnvshbench.so --sizes 8,4K,1M,64M --samples 10 --timeout 60s \
        --out "$W2/mpirun-loginshim.jsonl" --label mpirun-loginshim \
        rma/put/block rma/get/block rma/p rma/atomic/add latency/put/block latency/get/block > "$W2/mpirun.log" 2>&1
      echo "mpirun rc=$?"; tail -5 "$W2/mpirun.log"
    ) ;;
  esac
  own
done
