#!/usr/bin/env bash
# Compile the CUDA shim on a machine without a GPU, as CI does: install the
# CUDA 13 compiler wheels and the NVSHMEM / NCCL wheels pinned to the H200
# test machine's versions into a cached venv, then build libnvshbench.so
# through nvshbench's own toolchain discovery (the pip-wheel path users get),
# with its flags: every warning of the compile is an error (-Werror
# all-warnings, cuda/toolchain.go's BuildCommand), against both library sets.
# Usage: scripts/ci-toolchain.sh build/nvshbench
set -euo pipefail
BIN=${1:-build/nvshbench}
PINS="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvshmem-cu13==3.4.5 nvidia-nccl-cu13==2.28.9"
CACHE=${NVSHBENCH_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nvshbench-ci}
KEY=$(echo "$PINS" | sha256sum | cut -c1-12)
VENV=$CACHE/venv-$KEY
if [ ! -x "$VENV/bin/python3" ] || [ ! -f "$VENV/.complete" ]; then
  echo "ci-toolchain: installing the pinned CUDA toolchain wheels into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check $PINS
  touch "$VENV/.complete"
fi
# Only the wheels: no CUDA_HOME / nvcc on PATH may win over them here.
export NVSHBENCH_PYTHON=$VENV/bin/python3
export NVSHBENCH_CACHE=$CACHE/shim
unset CUDA_HOME NVSHMEM_HOME NCCL_HOME
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd:)
export PATH
out=build/libnvshbench.so
"$BIN" build-shim -o "$out" >/dev/null
echo "ci-toolchain: built $out with the pip toolchain:"
"$BIN" doctor --shim "$out" 2>/dev/null | sed -n '1,5p' || true
test -s "$out"
# Today's libraries beside the pinned ones: the same sources compile against
# NVSHMEM 3.8.0 and NCCL 2.32.3 (the NCCL device API changed in 2.29: its
# team builders became device-only), a second cached venv, a shim of its
# own (nothing loads it here; the pinned one is what the tests below use).
NEWPINS="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvshmem-cu13==3.8.0 nvidia-nccl-cu13==2.32.3"
NEWVENV=$CACHE/venv-$(echo "$NEWPINS" | sha256sum | cut -c1-12)
if [ ! -x "$NEWVENV/bin/python3" ] || [ ! -f "$NEWVENV/.complete" ]; then
  echo "ci-toolchain: installing NVSHMEM 3.8.0 / NCCL 2.32.3 wheels into $NEWVENV"
  rm -rf "$NEWVENV"
  python3 -m venv "$NEWVENV"
  "$NEWVENV/bin/pip" install -q --disable-pip-version-check $NEWPINS
  touch "$NEWVENV/.complete"
fi
NVSHBENCH_PYTHON=$NEWVENV/bin/python3 "$BIN" build-shim -o build/libnvshbench-nvshmem3.8-nccl2.32.so >/dev/null
test -s build/libnvshbench-nvshmem3.8-nccl2.32.so
echo "ci-toolchain: built build/libnvshbench-nvshmem3.8-nccl2.32.so against NVSHMEM 3.8.0 / NCCL 2.32.3"
# The tests of the tests, against both library sets: the shim's sources
# with one part of a mechanism, a collective, an atomic or a family left
# out must fail to compile, saying what is missing (cuda/forgotten_test.go;
# the unchanged sources compiled above). Required here: no compiler fails.
for py in "$VENV/bin/python3" "$NEWVENV/bin/python3"; do
  echo "ci-toolchain: forgotten parts against $(dirname "$(dirname "$py")"):"
  NVSHBENCH_PYTHON=$py NVSHBENCH_SCRATCH_REQUIRE=1 "${GO:-go}" test -count=1 -run '^TestForgottenPartsDoNotCompile$' ./cuda
done
# The login-node case (docs/install.md), no GPU needed: this shim on a
# machine whose NVSHMEM is a copy in another folder, the wheel's folder out
# of reach (the shim's RUNPATH rewritten to a folder that does not exist):
# the shim loads against the copy, doctor lists the copy's bootstrap
# plugins by full path and they load, and the bootstrap chosen under Open
# MPI (a real mpirun -np 2 where installed) and Slurm points NVSHMEM at the
# copy's plugin. Required here: a missing shim fails instead of skipping.
echo "ci-toolchain: $out against a relocated NVSHMEM:"
NVSHBENCH_RELOCATE_SHIM=$PWD/$out NVSHBENCH_RELOCATE_REQUIRE=1 "${GO:-go}" test -count=1 -v \
  -run '^(TestRelocatedNVSHMEM|TestDoctorWithRelocatedNVSHMEM)$' ./cuda ./cmd/nvshbench
