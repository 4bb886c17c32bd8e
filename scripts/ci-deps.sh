#!/usr/bin/env bash
# CI's extra tools, installed where the machine allows it (root and apt):
# Open MPI, so the launched mode is tested under a real mpirun. Without it
# that test skips and says so; nothing else depends on it.
command -v mpirun >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q openmpi-bin >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q openmpi-bin >/dev/null 2>&1; } \
    || echo "ci-deps: could not install Open MPI; the mpirun test will skip"
else
  echo "ci-deps: no root or no apt-get; the mpirun test will skip"
fi
exit 0
