#!/usr/bin/env bash
# The GPU call of 2026-12-01 (third session) for issue 30: the binary and shim
# of this commit (carried in build/carry.tar.xz, built without a GPU with
# CGO_ENABLED=0 and the pip CUDA toolchain), make gpu-test's binary, a full
# reproduce on one H200, and the plain CUDA chase beside its floors.
# It is the second session's script with its steps chosen:
exec env STEPS="${STEPS:-test full chase}" bash results/h200-2026-12-01b/session.sh
