// newer.cuh: rows only newer libraries have, compiled where the headers the
// shim is built against have them (their version macros, never a run-time
// guess) and waived, with the version they need, where not.
//   lat.flush  one thread: an 8-byte putmem_nbi, then nvshmemx_flush (the
//              source is reusable; NVSHMEM 3.7 and later), per iteration:
//              issue time, not a round trip (one quiet ends the launch).
//   rma.put_tma, rma.get_tma
//              bulk putmem_nbi / getmem_nbi at block scope, the bulk
//              kernel's loop (rma.cuh's bulk_loop) in a kernel whose CTAs
//              give NVSHMEM shared memory (nvshmemx_give_smem, the amount
//              nvshmemx_ask_smem recommends) and take it back at the end
//              (nvshmemx_release_smem): NVSHMEM 3.7 and later route a put
//              or get over NVLink P2P through TMA copies when
//              NVSHMEM_TMA_POLICY (read at nvshmem_init: the point's own
//              environment) is ENABLE and the CTA gave shared memory, the
//              pointers and size 16-byte aligned (the chunks are); with
//              DISABLE, NVSHMEM's default, the same kernel copies with
//              load/store, so the two policies are one kernel, like for like.

#define NB_NVSHMEM_VERSION (NVSHMEM_VENDOR_MAJOR_VERSION * 100 + NVSHMEM_VENDOR_MINOR_VERSION)
#define NB_HAS_NVSHMEM_FLUSH (NB_NVSHMEM_VERSION >= 307)
#define NB_HAS_NVSHMEM_TMA (NB_NVSHMEM_VERSION >= 307)  // nvshmemx_give_smem, NVSHMEM_TMA_POLICY (3.7.0's headers)

enum { NB_OP_LAT_FLUSH = 76, NB_OP_PUT_TMA = 160, NB_OP_GET_TMA = 161 };

// A row of NVSHMEM 3.7 or later on a shim whose headers are older: waived
// with what it needs (in validate, before anything runs; a launch's branch
// for the same case is never reached).
static int needs_nvshmem_37(bool has, const char *what) {
  if (has) return 0;
  return fail(NB_UNREACHABLE, "needs NVSHMEM >= 3.7 (%s): this shim was built against NVSHMEM %d.%d", what, NVSHMEM_VENDOR_MAJOR_VERSION,
              NVSHMEM_VENDOR_MINOR_VERSION);
}

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

#if NB_HAS_NVSHMEM_TMA
template <int OP>
__global__ void k_bulk_tma(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, int smem, int64_t *st) {
  extern __shared__ __align__(128) uint8_t tma_smem[];
  nvshmemx_give_smem(tma_smem, smem);
  bulk_loop<OP, NB_SCOPE_BLOCK, 0>(dst, src, size, iters, peer, nullptr, st);
  nvshmemx_release_smem();
}
#endif

// The RMA family's checks, with the version and the scope the TMA rows need.
static int newer_rma_validate(Run *r) {
  if (int rc = rma_validate(r)) return rc;
  if (int rc = needs_nvshmem_37(NB_HAS_NVSHMEM_TMA, "nvshmemx_give_smem, NVSHMEM_TMA_POLICY")) return rc;
  if (r->a->scope != NB_SCOPE_BLOCK) return fail(NB_ERR, "%s runs at block scope (NVSHMEM's TMA path takes a CTA's shared memory)", r->e->name);
  if (r->a->threads < 64 || r->a->threads % 32)
    return fail(NB_ERR, "%s needs whole warps, two at least (NVSHMEM's TMA staging falls back to load/store below)", r->e->name);
  return 0;
}

template <int OP>
static int launch_bulk_tma(Run *r, int iters) {
#if NB_HAS_NVSHMEM_TMA
  const Args *a = r->a;
  int smem = nvshmemx_ask_smem(NVSHMEMX_SMEM_RECOMMENDED);
  auto k = k_bulk_tma<OP>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  launched(r, k, a->ctas, a->threads, smem);
  k<<<a->ctas, a->threads, smem, S.stream>>>(S.dst, S.src, a->size, iters, r->target, smem, S.times);
  CKLAUNCH("TMA bulk kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_37(false, r->e->name);
#endif
}

static const Family kNewerRMA = {"newer libraries (rma)", newer_rma_validate, rma_active, rma_synced, 1, 0, 0, rma_prepare, nullptr, nullptr,
                                 rma_bytes, rma_work_set};

// The latency family's checks, with the version the row needs.
static int newer_validate(Run *r) {
  if (int rc = lat_validate(r)) return rc;
  if (r->a->op == NB_OP_LAT_FLUSH) return needs_nvshmem_37(NB_HAS_NVSHMEM_FLUSH, "nvshmemx_flush");
  return 0;
}

static int launch_lat_flush(Run *r, int iters) {
#if NB_HAS_NVSHMEM_FLUSH
  k_lat_flush<<<1, 1, 0, S.stream>>>(S.dst, S.src, iters, r->target, S.times);
  CKLAUNCH("flush kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_37(false, r->e->name);
#endif
}

static const Family kNewer = {"newer libraries", newer_validate, lat_active, lat_synced, 10, 0, 1, lat_prepare, nullptr, lat_before_launch,
                              lat_bytes, lat_work_set};

static constexpr OpEntry kNewerOps[] = {
    {NB_OP_LAT_FLUSH, "lat.flush", &kNewer, T_PAYLOAD, kCheckAtPeer, launch_lat_flush},
    {NB_OP_PUT_TMA, "rma.put_tma", &kNewerRMA, T_PAYLOAD, kCheckPut, launch_bulk_tma<NB_OP_PUT>},
    {NB_OP_GET_TMA, "rma.get_tma", &kNewerRMA, T_PAYLOAD, kCheckGet, launch_bulk_tma<NB_OP_GET>},
};
NB_CHECKED(kNewerOps);
