#!/usr/bin/env bash
# Builds, on the build machine (no GPU), what session.sh needs on the GPU
# machine, into build/carry.tar.xz (the device call's `carry`), for the steps
# named in $STEPS (as session.sh's):
#   gputest, tma, ce, persm nvshbench, gpu.test, libnvshbench.so (pinned wheels:
#                           NVSHMEM 3.4.5, NCCL 2.28.9)
#   tma                     + build/probe-nvshmem (the pinned wheel's NVSHMEM
#                           headers and libnvshmem_device.a)
#   new38                   + libnvshbench-n38.so (the same sources against
#                           NVSHMEM 3.8.0's wheel, NCCL 2.28.9's) and
#                           nvshmem38/lib (3.8.0's libnvshmem_host.so.3 and
#                           bootstrap plugins, found through NVSHMEM_HOME);
#                           a call of its own: without libnvshbench.so (the
#                           3.4.5 shim, whose waivers the gputest call shows)
#                           it is ~59 MB compressed, with it over the limit
# Run from the repository root. A call carries at most 64 MiB with the
# tracked tree (results/ alone is ~36 MB): for the call, take results/ out
# of git's index but for the scripts the call runs, and put it back after:
#   git rm -r -q --cached results && echo /results/ >> .git/info/exclude &&
#   git add -f results/h200-2026-12-01g/session.sh results/h200-2026-12-01g/tma-probe.cu results/h200-2026-12-01g/ce-probe.cu
#   ... the call ...
#   sed -i '\#^/results/$#d' .git/info/exclude && git reset -q
set -eu
STEPS=${STEPS:-tma ce persm}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
CI=$HOME/.cache/nvshbench-ci
PINNED=$(ls -d "$CI"/venv-19746453cb55 2>/dev/null || true)
[ -n "$PINNED" ] || { echo "carry.sh: run 'make shim-check' once: it makes the pinned venv ($CI/venv-*)" >&2; exit 2; }
SITE=$PINNED/lib/python3.11/site-packages/nvidia
make build >/dev/null
CGO_ENABLED=0 go test -c -tags gpu -ldflags "-s -w" -o build/gpu.test ./cuda/gputest
FILES="nvshbench gpu.test"
if [ "$STEPS" != new38 ]; then
  NVSHBENCH_PYTHON=$PINNED/bin/python3 build/nvshbench build-shim -o build/libnvshbench.so >/dev/null
  FILES="$FILES libnvshbench.so"
fi
if has tma || has tma3; then
  rm -rf build/probe-nvshmem && mkdir -p build/probe-nvshmem/lib
  cp -r "$SITE/nvshmem/include" build/probe-nvshmem/
  cp "$SITE/nvshmem/lib/libnvshmem_device.a" build/probe-nvshmem/lib/
  FILES="$FILES probe-nvshmem"
fi
if has new38; then
  V38=${V38:-/tmp/venv-n38}
  if [ ! -x "$V38/bin/python3" ]; then
    python3 -m venv "$V38"
    "$V38/bin/pip" install -q nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.88 nvidia-cuda-crt==13.0.88 \
      nvidia-cuda-cccl==13.0.85 nvidia-nvshmem-cu13==3.8.0 nvidia-nccl-cu13==2.28.9
  fi
  NVSHBENCH_PYTHON=$V38/bin/python3 build/nvshbench build-shim -o build/libnvshbench-n38.so >/dev/null
  rm -rf build/nvshmem38 && mkdir -p build/nvshmem38/lib
  cp "$V38"/lib/python3.11/site-packages/nvidia/nvshmem/lib/{libnvshmem_host.so.3,nvshmem_bootstrap_*.so.3} build/nvshmem38/lib/
  FILES="$FILES libnvshbench-n38.so nvshmem38"
fi
rm -f build/carry.tar.xz
XZ_OPT="-9e -T8" tar -C build -cJf build/carry.tar.xz $FILES
ls -la build/carry.tar.xz
# The call's limit is 64 MiB with the tracked tree (about 4 MB without results/).
if [ "$(stat -c %s build/carry.tar.xz)" -gt $((60 << 20)) ]; then
  echo "carry.sh: build/carry.tar.xz is over 60 MiB: split the steps over two calls (new38 alone)" >&2
  exit 1
fi
