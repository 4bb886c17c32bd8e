#!/usr/bin/env bash
# CI's extra tools, installed where the machine allows it (root and apt):
# Open MPI, so the launched mode is tested under a real mpirun, and Slurm
# with munge, so srun, sbatch of the shipped scripts and scancel are tested
# against a private single-node cluster the tests start and stop. Without
# them those tests skip and say so (.ci/run proves it first, with
# scripts/without-optional.sh); nothing else depends on them.
need=()
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
for t in slurmctld slurmd srun sbatch; do command -v $t >/dev/null 2>&1 || { need+=(slurm-wlm); break; }; done
command -v munged >/dev/null 2>&1 || need+=(munge)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${need[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${need[@]}" >/dev/null 2>&1; } \
    || echo "ci-deps: could not install ${need[*]}; the mpirun and Slurm tests will skip"
  # The packages' own daemons are not used: the tests start a private cluster.
  for svc in munge slurmctld slurmd; do (service "$svc" stop || true) >/dev/null 2>&1; done
else
  echo "ci-deps: no root or no apt-get (${need[*]} missing); the mpirun and Slurm tests will skip"
fi
exit 0
