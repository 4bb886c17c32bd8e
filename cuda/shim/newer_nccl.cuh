// newer_nccl.cuh: NCCL rows only newer NCCL releases have, compiled where
// the headers the shim is built against have them (NCCL_VERSION_CODE, never
// a run-time guess) and waived, with the version they need, where not.
// Included by nvshbench.cu after nccldev.cuh (whose windows it uses) and
// before collectives.cuh (whose implementation NB_IMPL_NCCL_CE it serves).
//
// - NCCL's copy-engine (zero-SM) collectives: the implementation
//   NB_IMPL_NCCL_CE of a collective that names its nccl<Coll>Config entry
//   point (nccl_ce, in its coll_<name>.cuh: AllGather and AlltoAll here;
//   NCCL's CE path also does Scatter and Gather, and no reduction).
//   What selects the path: the per-collective configuration
//   (ncclCollConfig_t, NCCL 2.31+) with CTAPolicy = NCCL_CTA_POLICY_ZERO,
//   and both buffers in windows registered NCCL_WIN_COLL_SYMMETRIC on the
//   communicator (the device API's: g_nd.src, g_nd.dst, S.buf bytes each).
//   NCCL takes it when every rank is in its LSA team (NVLink) and the
//   driver is CUDA 12.5+; else it runs its kernels silently (NCCL's
//   enqueue.cc, taskAppend; 2.30.7 read). NCCL 2.28-2.30 have the same CE
//   path behind the communicator's CTAPolicy (ncclConfig_t, set at
//   ncclCommInitRankConfig); this row uses the per-collective selector, so
//   it needs 2.31 headers and is waived where the shim was built against
//   older ones.
// NCCL's ncclLsaCopyTma (a TMA copy to a peer's LSA window) is not in the
// 2.32.3 headers (nccl_device/, nccl_device_wrapper.h): no row for it.

#if NB_NCCL_DEVICE && NCCL_VERSION_CODE >= NCCL_VERSION(2, 31, 0)
#define NB_HAS_NCCL_COLL_CONFIG 1
#else
#define NB_HAS_NCCL_COLL_CONFIG 0
#endif

// What the row needs, said by its waiver (validate) and by the branches a
// build without it keeps for the calls that validate never lets run.
#define NB_CE_NEEDS "needs NCCL >= 2.31 (ncclCollConfig_t, the per-collective CTA policy that selects NCCL's copy-engine path)"

// The nccl<Coll>Config entry points NCCL_CE names share one signature
// (AllGather: sendcount; AlltoAll: the count to each peer).
#if NB_HAS_NCCL_COLL_CONFIG
using NcclCollConfigFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t, const ncclCollConfig_t *);
#endif

struct NcclCE {
  const char *fn;  // the entry point resolved for the current point
#if NB_HAS_NCCL_COLL_CONFIG
  NcclCollConfigFn *call;
  ncclCollConfig_t cfg;
#endif
};
static NcclCE g_ce;

// ce_validate: the row's version, the device API's objects (their windows
// hold the buffers) and the loaded library. The same on every PE.
static int ce_validate(Run *r) {
#if !NB_HAS_NCCL_COLL_CONFIG
  (void)r;
#if NB_NCCL_DEVICE
  return fail(NB_UNREACHABLE, NB_CE_NEEDS ": this shim was built against NCCL %d.%d", NCCL_MAJOR, NCCL_MINOR);
#else
  return fail(NB_UNREACHABLE, NB_CE_NEEDS ": this shim was built without NCCL's headers");
#endif
#else
  if (!g_nccl.h) return fail(NB_UNREACHABLE, "%s", g_nccl.why);
  if (g_nccl.version < NCCL_VERSION(2, 31, 0))
    return fail(NB_UNREACHABLE, "needs NCCL >= 2.31 (ncclCollConfig_t): libnccl.so.2 is %d", g_nccl.version);
  if (S.shared_gpu) return fail(NB_UNREACHABLE, "NCCL refuses two ranks on one GPU");
  (void)r;
  return nd_state();
#endif
}

// ce_setup is collective: the device API's communicator and windows (made
// at the first point that needs them), this PE's source in its source
// window (fill: the collective's generator), the destination window
// poisoned where verified (nd_coll_setup), then the entry point fn of
// this collective.
static int ce_setup(Run *r, const char *fn, int (*fill)(Run *, void *)) {
#if NB_HAS_NCCL_COLL_CONFIG
  if (int st = nd_coll_setup(r, fill, "NCCL's copy-engine collectives need every rank on NVLink (else NCCL runs its kernels)", r->a->verify))
    return st;
  g_ce.fn = fn;
  if (!(*(void **)&g_ce.call = dlsym(g_nccl.h, fn))) return fail(NB_UNREACHABLE, "libnccl.so.2 (%d) has no %s", g_nccl.version, fn);
  g_ce.cfg = NCCL_COLLCONFIG_INITIALIZER;
  g_ce.cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;  // the selector: zero CTAs where NCCL can (its copy engines)
  return 0;
#else
  (void)r, (void)fn, (void)fill;
  return fail(NB_UNREACHABLE, NB_CE_NEEDS);
#endif
}

// The window the CE path writes (nullptr where there is none).
static void *ce_dst(void) {
#if NB_HAS_NCCL_COLL_CONFIG
  return g_nd.dst;
#else
  return nullptr;
#endif
}

// ce_launch: iters calls of the entry point, count elements of float (the
// collective's counts rule), one per operation, on S.stream.
static int ce_launch(int64_t count, int iters) {
#if NB_HAS_NCCL_COLL_CONFIG
  if (!g_ce.call) return fail(NB_ERR, "no NCCL copy-engine entry point resolved");
  for (int i = 0; i < iters; i++) {
    ncclResult_t nr = g_ce.call(g_nd.src, g_nd.dst, (size_t)count, ncclFloat32, g_nd.comm, S.stream, &g_ce.cfg);
    if (nr != ncclSuccess) return nd_err(NB_ERR, g_ce.fn, nr);
  }
  return 0;
#else
  (void)count, (void)iters;
  return fail(NB_UNREACHABLE, NB_CE_NEEDS);
#endif
}
