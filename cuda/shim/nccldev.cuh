// nccldev.cuh: NCCL's device API (2.28: symmetric memory windows, a device
// communicator, load/store-accessible (LSA) peer pointers, LSA barriers, and
// GIN for the network) beside NVSHMEM, on the same GPUs, launches and
// verification. Included by nvshbench.cu after collectives.cuh.
//
// - bulk put / get (rma.lsa_put / rma.lsa_get): the RMA family's roles,
//   chunks and checks; each scope group copies its chunk with 16-byte
//   stores into (loads from) the peer's window through ncclGetLsaPointer.
// - AllReduce (NB_IMPL_LSA_ONESHOT / TWOSHOT): the structure of our
//   multi-CTA kernels with NCCL's pieces: inputs and the two-shot scratch in
//   NCCL windows, peers through ncclGetLsaPointer, CTA b of every rank meets
//   through LSA barrier b (ncclLsaBarrierSession).
// - GIN put + signal (rma.gin_put_signal): asks ncclDevCommCreate for GIN
//   resources; where that fails (no GIN-capable network) the point is
//   waived with NCCL's own message.
//
// Everything NCCL needs collectively (communicator, ncclMemAlloc'd windows,
// window registration, device communicators) is made once, at the first
// point that needs it, on every PE, each step agreed before the next; a
// failure is remembered on every PE and given as the reason of every later
// point of the kind.

// The family's operation codes (private; see rma.cuh).
enum {
  NB_OP_LSA_PUT = 14,        // stores through ncclGetLsaPointer into the peer's window, at args.scope
  NB_OP_LSA_GET = 15,        // loads through ncclGetLsaPointer from the peer's window, at args.scope
  NB_OP_GIN_PUT_SIGNAL = 16, // ncclGin put + SignalInc per CTA (GPU-initiated networking)
  NB_OP_LSA_LAT_PUT = 35,    // round trip: the CTA stores the message through an LSA pointer + system fence
  NB_OP_LSA_LAT_GET = 36,    // round trip: pointer chase, the CTA loads block k through an LSA pointer
};

// The one refusal of a shim built without NCCL's device headers, given at
// validation (nd_headers) of every operation of the families below.
static int nd_missing(void) {
  return fail(NB_UNREACHABLE, "this shim was built without NCCL's device headers (nccl_device.h): rebuild it where the NCCL 2.28 wheel is installed ('nvshbench build-shim')");
}

static int nd_headers(void) { return NB_NCCL_DEVICE ? 0 : nd_missing(); }

#if NB_NCCL_DEVICE
// The device ABI of 2.28 differs from 2.29+: the loaded library must match
// the headers the kernels were compiled against.
#define NB_NCCL_DEV_ABI (NCCL_VERSION_CODE / 100)

struct NcclDevApi {
  ncclResult_t (*memAlloc)(void **, size_t);
  ncclResult_t (*memFree)(void *);
  ncclResult_t (*winRegister)(ncclComm_t, void *, size_t, ncclWindow_t *, int);
  ncclResult_t (*winDeregister)(ncclComm_t, ncclWindow_t);
  ncclResult_t (*devCommCreate)(ncclComm_t, ncclDevCommRequirements_t const *, ncclDevComm_t *);
  ncclResult_t (*devCommDestroy)(ncclComm_t, ncclDevComm_t const *);
  const char *(*lastError)(ncclComm_t);
};

struct NcclDev {
  int state;      // 0: not made yet, 1: ready, <0: failed (status code)
  char why[400];  // the failure, the same on every PE
  NcclDevApi f;
  ncclComm_t comm;
  void *src, *dst;          // ncclMemAlloc'd, S.buf bytes each
  ncclWindow_t wsrc, wdst;  // registered NCCL_WIN_COLL_SYMMETRIC
  int reg_src, reg_dst, dc_made;
  ncclDevComm dc;           // LSA barriers: one per CTA up to NB_MAX_CTAS
  int gin_state;            // as state, for the device communicator with GIN resources
  char gin_why[400];
  ncclDevComm gdc;
};
static NcclDev g_nd;

static int nd_syms(void) {
  void *h = g_nccl.h;
#define SYM(m, n)                                                                            \
  if (!(*(void **)&g_nd.f.m = dlsym(h, n)))                                                  \
    return fail(NB_UNREACHABLE, "libnccl.so.2 (%d) has no %s: the NCCL device API needs NCCL 2.28", g_nccl.version, n);
  SYM(memAlloc, "ncclMemAlloc") SYM(memFree, "ncclMemFree") SYM(winRegister, "ncclCommWindowRegister")
  SYM(winDeregister, "ncclCommWindowDeregister") SYM(devCommCreate, "ncclDevCommCreate")
  SYM(devCommDestroy, "ncclDevCommDestroy") SYM(lastError, "ncclGetLastError")
#undef SYM
  return 0;
}

// nd_err formats a failed NCCL call with NCCL's own last message.
static int nd_err(int code, const char *what, ncclResult_t nr) {
  const char *last = g_nd.f.lastError && g_nd.comm ? g_nd.f.lastError(g_nd.comm) : "";
  return fail(code, "%s: %s%s%s", what, g_nccl.errorString(nr), last && last[0] ? ": " : "", last ? last : "");
}

// nd_step ends one collective step: every PE learns every PE's status; a
// failure becomes the remembered reason.
static int nd_step(int st) {
  st = agree(st, 0, 0, 0, nullptr, nullptr);
  if (st) {
    g_nd.state = st;
    snprintf(g_nd.why, sizeof g_nd.why, "%s", g_err);
  }
  return st;
}

// nd_make is collective: the communicator, two windows and the device
// communicator, each step agreed before the next collective NCCL call.
static int nd_make(void) {
  int st = 0;
  if (!g_nccl.h) st = fail(NB_UNREACHABLE, "%s", g_nccl.why);
  else if (g_nccl.version / 100 != NB_NCCL_DEV_ABI)
    st = fail(NB_UNREACHABLE, "the NCCL device API kernels were compiled against NCCL %d.%d headers and libnccl.so.2 is %d: the device ABI changes between minor versions (2.28 vs 2.29+)",
              NCCL_MAJOR, NCCL_MINOR, g_nccl.version);
  else st = nd_syms();
  if ((st = nd_step(st))) return st;
  if ((st = comm_make("devapi", "", ""))) return nd_step(st);
  g_nd.comm = comm_find("devapi")->comm;
  size_t bytes = ((size_t)S.buf + NCCL_WIN_REQUIRED_ALIGNMENT - 1) & ~(size_t)(NCCL_WIN_REQUIRED_ALIGNMENT - 1);
  ncclResult_t nr = g_nd.f.memAlloc(&g_nd.src, bytes);
  if (nr == ncclSuccess) nr = g_nd.f.memAlloc(&g_nd.dst, bytes);
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclMemAlloc", nr);
  if ((st = nd_step(st))) return st;
  nr = g_nd.f.winRegister(g_nd.comm, g_nd.src, bytes, &g_nd.wsrc, NCCL_WIN_COLL_SYMMETRIC);
  g_nd.reg_src = nr == ncclSuccess;
  if (nr == ncclSuccess) {
    nr = g_nd.f.winRegister(g_nd.comm, g_nd.dst, bytes, &g_nd.wdst, NCCL_WIN_COLL_SYMMETRIC);
    g_nd.reg_dst = nr == ncclSuccess;
  }
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclCommWindowRegister", nr);
  if ((st = nd_step(st))) return st;
  ncclDevCommRequirements_t req;
  memset(&req, 0, sizeof req);  // 2.28 has no initializer macro
  req.lsaBarrierCount = NB_MAX_CTAS;
  nr = g_nd.f.devCommCreate(g_nd.comm, &req, &g_nd.dc);
  g_nd.dc_made = nr == ncclSuccess;
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclDevCommCreate (LSA barriers)", nr);
  if ((st = nd_step(st))) return st;
  g_nd.state = 1;
  return 0;
}

// nd_make_gin is collective: a second device communicator that asks for GIN
// resources (one context, one signal per CTA). Without a GIN-capable
// network NCCL refuses it: that refusal, measured here, is the waiver.
static int nd_make_gin(void) {
  ncclDevCommRequirements_t req;
  memset(&req, 0, sizeof req);
  req.ginForceEnable = true;
  req.ginContextCount = 1;
  req.ginSignalCount = NB_MAX_CTAS + 1;  // one per CTA, and the target's acknowledgement
  ncclResult_t nr = g_nd.f.devCommCreate(g_nd.comm, &req, &g_nd.gdc);
  int st = 0;
  if (nr != ncclSuccess) st = nd_err(NB_UNREACHABLE, "ncclDevCommCreate with GIN resources (GPU-initiated networking needs a GIN-capable network: InfiniBand or RoCE)", nr);
  else if (g_nd.gdc.ginContextCount < 1) {
    g_nd.f.devCommDestroy(g_nd.comm, &g_nd.gdc);
    st = fail(NB_UNREACHABLE, "ncclDevCommCreate with GIN resources returned no GIN context");
  }
  st = agree(st, 0, 0, 0, nullptr, nullptr);
  g_nd.gin_state = st ? st : 1;
  if (st) snprintf(g_nd.gin_why, sizeof g_nd.gin_why, "%s", g_err);
  return st;
}

// nd_ready is collective: the objects a point of this op needs, made at the
// first such point; the remembered failure afterwards.
static int nd_ready(int op) {
  if (g_nd.state == 0) nd_make();
  if (g_nd.state < 0) return fail(g_nd.state, "%s", g_nd.why);
  if (op == NB_OP_GIN_PUT_SIGNAL) {
    if (g_nd.gin_state == 0) nd_make_gin();
    if (g_nd.gin_state < 0) return fail(g_nd.gin_state, "%s", g_nd.gin_why);
  }
  return 0;
}

static void nd_release(void) {
  if (g_nd.gin_state == 1) g_nd.f.devCommDestroy(g_nd.comm, &g_nd.gdc);
  if (g_nd.dc_made) g_nd.f.devCommDestroy(g_nd.comm, &g_nd.dc);
  if (g_nd.reg_dst) g_nd.f.winDeregister(g_nd.comm, g_nd.wdst);
  if (g_nd.reg_src) g_nd.f.winDeregister(g_nd.comm, g_nd.wsrc);
  if (g_nd.dst) g_nd.f.memFree(g_nd.dst);
  if (g_nd.src) g_nd.f.memFree(g_nd.src);
  memset(&g_nd, 0, sizeof g_nd);
}

// The LSA index of world rank q, or -1 if q is not load/store accessible.
static int nd_lsa_peer(const ncclDevComm &dc, int q) {
  if (!ncclTeamRankIsMember(ncclTeamLsa(dc), ncclTeamWorld(dc), q)) return -1;
  return ncclTeamRankToLsa(dc, ncclTeamWorld(dc), q);
}

// ---------------------------------------------------------------------------
// Kernels

template <int SCOPE>
__device__ static inline void lane_of(int *lane, int *width) {
  if (SCOPE == NB_SCOPE_BLOCK) *lane = threadIdx.x, *width = blockDim.x;
  else if (SCOPE == NB_SCOPE_WARP) *lane = threadIdx.x % 32, *width = 32;
  else *lane = 0, *width = 1;
}

// Bulk put (GET = 0: local -> the peer's window) or get (GET = 1: the peer's
// window -> local), the peer's address from ncclGetLsaPointer.
template <int SCOPE, int GET>
__global__ void k_lsa_bulk(ncclWindow_t win, uint8_t *local, int64_t size, int iters, int lsa_peer) {
  int64_t groups, g, off, len;
  group_of(SCOPE, &groups, &g);
  chunk_of(size, groups, g, &off, &len);
  if (SCOPE == NB_SCOPE_WARP && threadIdx.x / 32 * 32 + 32 > blockDim.x) len = 0;  // a partial warp idles
  int lane, width;
  lane_of<SCOPE>(&lane, &width);
  uint8_t *remote = (uint8_t *)ncclGetLsaPointer(win, 0, lsa_peer);
  for (int it = 0; it < iters; it++) {
    if (len <= 0) continue;
    if (GET) group_copy(local + off, remote + off, len, lane, width);
    else group_copy(remote + off, local + off, len, lane, width);
  }
  // A put ends delivered, as NVSHMEM's _nbi + quiet: without this fence the
  // posted stores were still draining when the kernel ended (LSA put at 64
  // KiB read 595 GB/s, above the link).
  if (!GET) __threadfence_system();
}

// One-shot AllReduce: CTA b sums slice b of every rank's window.
__global__ void k_lsa_oneshot(float *dst, ncclWindow_t src, int64_t n, ncclDevComm dc, int iters) {
  __shared__ PeerPtrs peers;
  int npes = dc.lsaSize;
  for (int q = threadIdx.x; q < npes; q += blockDim.x) peers.p[q] = (const float *)ncclGetLsaPointer(src, 0, q);
  __syncthreads();
  int64_t per = (n + gridDim.x - 1) / gridDim.x;
  per = (per + 3) & ~3ll;
  int64_t lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, blockIdx.x};
  for (int it = 0; it < iters; it++) {
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
    if (lo < hi) sum_range(dst, peers, npes, lo, hi);
  }
}

// Two-shot: reduce-scatter into this rank's scratch window, LSA barrier,
// all-gather from every rank's scratch.
__global__ void k_lsa_twoshot(float *dst, ncclWindow_t src, ncclWindow_t scratch, int64_t n, ncclDevComm dc, int iters) {
  __shared__ PeerPtrs peers, scr;
  int npes = dc.lsaSize, me = dc.lsaRank;
  for (int q = threadIdx.x; q < npes; q += blockDim.x) {
    peers.p[q] = (const float *)ncclGetLsaPointer(src, 0, q);
    scr.p[q] = (const float *)ncclGetLsaPointer(scratch, 0, q);
  }
  __syncthreads();
  float *myscratch = (float *)scr.p[me];
  int64_t chunk = (n + npes - 1) / npes;
  chunk = (chunk + 3) & ~3ll;
  int64_t per = (chunk + gridDim.x - 1) / gridDim.x;
  per = (per + 3) & ~3ll;
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, blockIdx.x};
  for (int it = 0; it < iters; it++) {
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
    {
      int64_t lo = me * chunk + blockIdx.x * per;
      int64_t end = (me + 1) * chunk < n ? (me + 1) * chunk : n;
      int64_t hi = lo + per < end ? lo + per : end;
      if (lo < hi) sum_range(myscratch, peers, npes, lo, hi);
    }
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
    for (int q = 0; q < npes; q++) {
      int64_t lo = q * chunk + blockIdx.x * per;
      int64_t end = (q + 1) * chunk < n ? (q + 1) * chunk : n;
      int64_t hi = lo + per < end ? lo + per : end;
      if (lo < hi) copy_range(dst, scr.p[q], lo, hi);
    }
  }
}

// GIN put + signal, both ranks in every launch. The initiator's CTA b puts
// its chunk from its source window into the target's destination window
// with SignalInc on signal b, iters times; the target's CTA b waits until
// signal b reaches want (every increment up to the end of this launch) and
// then acknowledges on the initiator's signal NB_MAX_CTAS; the initiator
// waits for want_ack acknowledgements, so its launch ends when the payload
// has landed (a put's completion alone says only that the source may be
// reused).
__global__ void k_gin_put_signal(ncclDevComm dc, ncclWindow_t wdst, ncclWindow_t wsrc, int64_t size, int iters, int peer,
                                 int initiator, uint64_t want, uint64_t want_ack) {
  ncclGin gin{dc, 0};
  ncclTeam world = ncclTeamWorld(dc);
  int64_t off, len;
  chunk_of(size, gridDim.x, blockIdx.x, &off, &len);
  const ncclGinSignal_t ack = NB_MAX_CTAS;
  if (initiator) {
    if (len > 0)
      for (int it = 0; it < iters; it++)
        gin.put(world, peer, wdst, off, wsrc, off, len, ncclGin_SignalInc{(ncclGinSignal_t)blockIdx.x}, ncclGin_None{}, ncclCoopCta());
    gin.flush(ncclCoopCta());
    if (blockIdx.x == 0) gin.waitSignal(ncclCoopCta(), ack, want_ack);
  } else if (len > 0) {
    gin.waitSignal(ncclCoopCta(), (ncclGinSignal_t)blockIdx.x, want);
    gin.signal(world, peer, ncclGin_SignalInc{ack}, ncclCoopCta());
  }
}

// Zero the GIN signals of this rank (between points: nothing in flight).
__global__ void k_gin_reset(ncclDevComm dc, int n) {
  ncclGin gin{dc, 0};
  for (int i = threadIdx.x; i < n; i += blockDim.x) gin.resetSignal((ncclGinSignal_t)i);
}

// Read the GIN signals of this rank into out (the check).
__global__ void k_gin_read(ncclDevComm dc, int n, uint64_t *out) {
  ncclGin gin{dc, 0};
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = gin.readSignal((ncclGinSignal_t)i);
}

// Latency, one CTA (the scope sets its size: 1, 32 or --threads threads).
// put: the CTA stores the message into the peer's window, then a
// system-scope fence (what NVSHMEM's quiet is over P2P) per iteration.
__global__ void k_lsa_lat_put(ncclWindow_t wdst, const uint8_t *src, int64_t size, int iters, int lsa_peer, int64_t *times) {
  uint8_t *remote = (uint8_t *)ncclGetLsaPointer(wdst, 0, lsa_peer);
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    group_copy(remote, src, size, threadIdx.x, blockDim.x);
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
  }
}

// get: pointer chase through the peer's window: the CTA loads block cur of
// the chain into dst; the next index is the first word that arrived.
__global__ void k_lsa_lat_get(ncclWindow_t wsrc, uint8_t *dst, int64_t size, int64_t stride, int64_t n, int64_t *cursor, int iters,
                              int lsa_peer, int64_t *times) {
  const uint8_t *remote = (const uint8_t *)ncclGetLsaPointer(wsrc, 0, lsa_peer);
  chase(cursor, n, iters, times, [&](int64_t cur) -> uint64_t {
    group_copy(dst, remote + cur * stride, size, threadIdx.x, blockDim.x);
    __syncthreads();
    return threadIdx.x == 0 ? *(volatile uint64_t *)dst : 0;
  });
}

// ---------------------------------------------------------------------------
// Host side of the families below: the NCCL objects and the windows'
// contents (setup, collective), the launches and the checks of the window.

// nd_state: the remembered failure of the NCCL objects, the same on every PE.
static int nd_state(void) {
  if (g_nd.state < 0) return fail(g_nd.state, "%s", g_nd.why);
  return 0;
}

static int nd_setup(Run *r) {
  const Args *a = r->a;
  int st = nd_ready(a->op);  // collective
  if (st) return st;
  // The windows of this point: this PE's pattern in its source window (what
  // a peer's get or GIN put reads), the destination window poisoned.
  k_fill<<<1024, 256, 0, S.stream>>>((uint8_t *)g_nd.src, a->size, S.me, a->seed);
  CKLAUNCH("window fill");
  if (a->verify) {
    k_poison<<<1024, 256, 0, S.stream>>>((uint8_t *)g_nd.dst, a->size);
    CKLAUNCH("window poison");
  }
  if (a->op == NB_OP_GIN_PUT_SIGNAL) {
    k_gin_reset<<<1, 256, 0, S.stream>>>(g_nd.gdc, NB_MAX_CTAS + 1);
    CKLAUNCH("GIN signal reset");
  }
  CK(cudaStreamSynchronize(S.stream));
  if (a->op != NB_OP_GIN_PUT_SIGNAL && r->initiator && nd_lsa_peer(g_nd.dc, r->target) < 0)
    return fail(NB_UNREACHABLE, "PE %d is not in PE %d's LSA team (no load/store access through NCCL)", r->target, S.me);
  return 0;
}

static int nd_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  int from = rma_landed_from(r);
  if (from < 0) return 0;
  if (r->e->lands == LANDS_INITIATOR) return check_bytes(S.dst, a->size, 0, from, a->seed, res);
  int rc = check_bytes((const uint8_t *)g_nd.dst, a->size, 0, from, a->seed, res);
  if (rc || r->e->lands != LANDS_TARGET_SIGNALS) return rc;
  // Every CTA that moved bytes signalled once per operation.
  k_gin_read<<<1, 256, 0, S.stream>>>(g_nd.gdc, (int)rma_active_groups(a), (uint64_t *)S.scratch);
  CKLAUNCH("GIN signal read");
  return check_u64((const uint64_t *)S.scratch, rma_active_groups(a), (uint64_t)r->ops, res);
}

template <int GET>
static int launch_lsa(Run *r, int iters) {
  const Args *a = r->a;
  int lp = nd_lsa_peer(g_nd.dc, r->target);
  if (lp < 0) return fail(NB_UNREACHABLE, "PE %d is not in the LSA team", r->target);
  ncclWindow_t w = GET ? g_nd.wsrc : g_nd.wdst;
  uint8_t *local = GET ? S.dst : S.src;
  dim3 g(a->ctas), b(a->threads);
  with_scope(a->scope, [&](auto sc) { k_lsa_bulk<decltype(sc)::value, GET><<<g, b, 0, S.stream>>>(w, local, a->size, iters, lp); });
  CKLAUNCH("LSA bulk kernel");
  return 0;
}

static int launch_gin(Run *r, int iters) {
  const Args *a = r->a;
  static uint64_t launches;
  if (r->ops == 0) launches = 0;  // the first launch of a point
  launches++;
  int peer = r->initiator ? r->target : 0;
  uint64_t want = (uint64_t)(r->ops + iters);
  uint64_t want_ack = launches * (uint64_t)rma_active_groups(a);
  k_gin_put_signal<<<a->ctas, a->threads, 0, S.stream>>>(g_nd.gdc, g_nd.wdst, g_nd.wsrc, a->size, iters, peer, r->initiator, want,
                                                         want_ack);
  CKLAUNCH("GIN put + signal kernel");
  return 0;
}

static int nd_coll_setup(Run *r) {
  const Args *a = r->a;
  int st = nd_ready(a->op);  // collective
  if (st) return st;
  if (g_nd.dc.lsaSize != S.npes)
    return fail(NB_UNREACHABLE, "the LSA team has %d of the %d ranks: an LSA AllReduce needs load/store access to every rank", g_nd.dc.lsaSize, S.npes);
  int64_t n = a->size / 4;
  k_cfill<float><<<1024, 256, 0, S.stream>>>((float *)g_nd.src, n, S.me, a->seed, 0, n);
  CKLAUNCH("window fill");
  CK(cudaStreamSynchronize(S.stream));
  return 0;
}

static int nd_coll_launch(Run *r, int iters) {
  const Args *a = r->a;
  int64_t n = a->size / 4;
  if (a->impl == NB_IMPL_LSA_ONESHOT)
    k_lsa_oneshot<<<a->ctas, a->threads, 0, S.stream>>>((float *)S.dst, g_nd.wsrc, n, g_nd.dc, iters);
  else
    k_lsa_twoshot<<<a->ctas, a->threads, 0, S.stream>>>((float *)S.dst, g_nd.wsrc, g_nd.wdst, n, g_nd.dc, iters);
  CKLAUNCH("LSA allreduce");
  return 0;
}

static int nd_lat_setup(Run *r) {
  const Args *a = r->a;
  int st = nd_ready(a->op);  // collective
  if (st) return st;
  int64_t n = a->size;
  if (r->e->lands == LANDS_CHASED) {
    Chain c = chain_of(a->size);
    n = c.n * c.stride;
  }
  // lat_prepare wrote the pattern (and the chain) into S.src: the window
  // gets the same bytes, so the latency family's checks apply.
  CK(cudaMemcpyAsync(g_nd.src, S.src, n, cudaMemcpyDeviceToDevice, S.stream));
  if (a->verify) {
    k_poison<<<1024, 256, 0, S.stream>>>((uint8_t *)g_nd.dst, a->size);
    CKLAUNCH("window poison");
  }
  CK(cudaStreamSynchronize(S.stream));
  if (r->initiator && nd_lsa_peer(g_nd.dc, r->target) < 0)
    return fail(NB_UNREACHABLE, "PE %d is not in PE %d's LSA team (no load/store access through NCCL)", r->target, S.me);
  return 0;
}

static int nd_lat_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  if (r->e->lands == LANDS_AT_TARGET) {
    if (S.me != a->peer) return 0;
    return check_bytes((const uint8_t *)g_nd.dst, a->size, 0, 0, a->seed, res);
  }
  return lat_check(r, res);  // the chase lands in this PE's own memory
}

static int launch_lsa_lat_put(Run *r, int iters) {
  k_lsa_lat_put<<<1, r->a->threads, 0, S.stream>>>(g_nd.wdst, S.src, r->a->size, iters, nd_lsa_peer(g_nd.dc, r->target), S.times);
  CKLAUNCH("LSA put latency kernel");
  return 0;
}

static int launch_lsa_lat_get(Run *r, int iters) {
  const Args *a = r->a;
  Chain c = chain_of(a->size);
  k_lsa_lat_get<<<1, a->threads, 0, S.stream>>>(g_nd.wsrc, S.dst, a->size, c.stride, c.n, S.cursor, iters, nd_lsa_peer(g_nd.dc, r->target),
                                                  S.times);
  CKLAUNCH("LSA get latency kernel");
  return 0;
}
#else
// Without NCCL's device headers every point of these operations is refused
// at validation (nd_headers), on every PE, before any of these could run.
static int nd_state(void) { return nd_missing(); }
static int nd_setup(Run *) { return nd_missing(); }
static int nd_check(Run *, nb_result *) { return nd_missing(); }
template <int GET>
static int launch_lsa(Run *, int) { return nd_missing(); }
static int launch_gin(Run *, int) { return nd_missing(); }
static int nd_coll_setup(Run *) { return nd_missing(); }
static int nd_coll_launch(Run *, int) { return nd_missing(); }
static int nd_lat_setup(Run *) { return nd_missing(); }
static int nd_lat_check(Run *, nb_result *) { return nd_missing(); }
static int launch_lsa_lat_put(Run *, int) { return nd_missing(); }
static int launch_lsa_lat_get(Run *, int) { return nd_missing(); }
#endif  // NB_NCCL_DEVICE

// ---------------------------------------------------------------------------
// The family: the RMA family's roles, prepare, bytes and checks, plus the
// NCCL objects and the windows' contents (setup, collective).

static int nd_validate(Run *r) {
  int st = rma_validate(r);
  if (st) return st;
  if ((st = nd_headers())) return st;
  const Args *a = r->a;
  if (a->op == NB_OP_GIN_PUT_SIGNAL) {
    if (a->scope != NB_SCOPE_BLOCK) return fail(NB_ERR, "GIN put + signal runs at block scope (one signal per CTA)");
    if (a->ctas > NB_MAX_CTAS) return fail(NB_ERR, "GIN put + signal: at most %d CTAs (one signal each)", NB_MAX_CTAS);
    if (a->bidir) return fail(NB_ERR, "GIN put + signal is measured one way");
    if (a->peer == 0) return fail(NB_UNREACHABLE, "GIN put + signal needs two ranks");
  }
  if (a->op != NB_OP_GIN_PUT_SIGNAL && a->scope == NB_SCOPE_WARP && a->threads % 32) return fail(NB_ERR, "warp scope needs whole warps");
  return nd_state();
}

static int nd_active(Run *r) {
  if (r->a->op == NB_OP_GIN_PUT_SIGNAL) return S.me == 0 || S.me == r->a->peer;  // the target waits in every launch
  return rma_active(r);
}

static int nd_synced(Run *r) { return r->a->op == NB_OP_GIN_PUT_SIGNAL || rma_synced(r); }

static const Family kND = {"nccl-device", nd_validate, nd_active, nd_synced, 1, 0, rma_per_op, rma_prepare, nd_setup, nullptr,
                           nd_check, rma_bytes, rma_work_set};

static const OpEntry kNDOps[] = {
    {NB_OP_LSA_PUT, "rma.lsa_put", &kND, LANDS_TARGET, launch_lsa<0>},
    {NB_OP_LSA_GET, "rma.lsa_get", &kND, LANDS_INITIATOR, launch_lsa<1>},
    {NB_OP_GIN_PUT_SIGNAL, "rma.gin_put_signal", &kND, LANDS_TARGET_SIGNALS, launch_gin},
};

// --- the AllReduce implementations of the collectives family

static int nd_coll_validate(Run *r) {
  const Args *a = r->a;
  if (a->op != NB_OP_ALLREDUCE || a->dtype != NB_DT_F32) return fail(NB_ERR, "the NCCL device API AllReduce does float sums only");
  if (int st = nd_headers()) return st;
  return nd_state();
}

// --- latency: the latency family's roles, chain and checks, the message
// (and the chain) copied into this PE's source window at setup.

static int64_t nd_lat_bytes(Run *r) { return r->initiator ? r->a->size : 0; }

static int nd_lat_validate(Run *r) {
  int st = lat_validate(r);
  if (st) return st;
  if ((st = nd_headers())) return st;
  return nd_state();
}

static const Family kNDLat = {"nccl-device latency", nd_lat_validate, lat_active, lat_synced, 10, 0, lat_per_op, lat_prepare, nd_lat_setup,
                              lat_before_launch, nd_lat_check, nd_lat_bytes, lat_work_set};

static const OpEntry kNDLatOps[] = {
    {NB_OP_LSA_LAT_PUT, "lat.lsa_put", &kNDLat, LANDS_AT_TARGET, launch_lsa_lat_put},
    {NB_OP_LSA_LAT_GET, "lat.lsa_get", &kNDLat, LANDS_CHASED, launch_lsa_lat_get},
};
