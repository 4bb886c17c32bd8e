// newer.cuh: rows only newer libraries have, compiled where the headers the
// shim is built against have them (their version macros, never a run-time
// guess) and waived, with the version they need, where not.
//   lat.flush  one thread: an 8-byte putmem_nbi, then nvshmemx_flush (the
//              source is reusable; NVSHMEM 3.7 and later), per iteration:
//              issue time, not a round trip (one quiet ends the launch).

#define NB_NVSHMEM_VERSION (NVSHMEM_VENDOR_MAJOR_VERSION * 100 + NVSHMEM_VENDOR_MINOR_VERSION)
#define NB_HAS_NVSHMEM_FLUSH (NB_NVSHMEM_VERSION >= 307)

enum { NB_OP_LAT_FLUSH = 76 };

#if NB_HAS_NVSHMEM_FLUSH
__global__ void k_lat_flush(uint8_t *dst, const uint8_t *src, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    nvshmem_putmem_nbi(dst, src, 8, peer);
    nvshmemx_flush();
  }
  stamp(times, iters);
  nvshmem_quiet();  // delivered, for the check
}
#endif

// The latency family's checks, with the version the row needs.
static int newer_validate(Run *r) {
  if (int rc = lat_validate(r)) return rc;
  if (r->a->op == NB_OP_LAT_FLUSH && !NB_HAS_NVSHMEM_FLUSH)
    return fail(NB_UNREACHABLE, "needs NVSHMEM >= 3.7 (nvshmemx_flush): this shim was built against NVSHMEM %d.%d",
                NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
  return 0;
}

static int launch_lat_flush(Run *r, int iters) {
#if NB_HAS_NVSHMEM_FLUSH
  k_lat_flush<<<1, 1, 0, S.stream>>>(S.dst, S.src, iters, r->target, S.times);
  CKLAUNCH("flush kernel");
  return 0;
#else
  (void)iters;
  return fail(NB_UNREACHABLE, "%s needs NVSHMEM >= 3.7", r->e->name);
#endif
}

static const Family kNewer = {"newer libraries", newer_validate, lat_active, lat_synced, 10, 0, 1, lat_prepare, nullptr, lat_before_launch,
                              lat_bytes, lat_work_set};

static constexpr OpEntry kNewerOps[] = {
    {NB_OP_LAT_FLUSH, "lat.flush", &kNewer, T_PAYLOAD, kCheckAtPeer, launch_lat_flush},
};
NB_CHECKED(kNewerOps);
