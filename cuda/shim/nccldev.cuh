// nccldev.cuh: NCCL's device API (2.28: symmetric memory windows, a device
// communicator, load/store-accessible (LSA) peer pointers, LSA barriers, and
// GIN for the network) beside NVSHMEM, on the same GPUs, launches and
// verification. Included by nvshbench.cu after rma.cuh, latency.cuh and
// allreduce.cuh, whose families it borrows; the NCCL objects are nccl.cuh's.
//
// - bulk put / get (rma.lsa_put / rma.lsa_get): the RMA family's roles,
//   chunks and checks; each scope group copies its chunk with 16-byte
//   stores into (loads from) the peer's window through ncclGetLsaPointer.
// - AllReduce (NB_IMPL_LSA_ONESHOT / TWOSHOT of the collectives family):
//   the multi-CTA template of allreduce.cuh with NCCL's pieces: inputs and
//   the two-shot scratch in NCCL windows, peers through ncclGetLsaPointer,
//   CTA b of every rank meets through LSA barrier b (ncclLsaBarrierSession).
// - GIN put + signal (rma.gin_put_signal): asks ncclDevCommCreate for GIN
//   resources; where that fails (no GIN-capable network) the point is
//   waived with NCCL's own message.
// - round trips (lat.lsa_put / lat.lsa_get): the latency family's.

// The family's operation codes (private; see rma.cuh).
enum {
  NB_OP_LSA_PUT = 14,        // stores through ncclGetLsaPointer into the peer's window, at args.scope
  NB_OP_LSA_GET = 15,        // loads through ncclGetLsaPointer from the peer's window, at args.scope
  NB_OP_GIN_PUT_SIGNAL = 16, // ncclGin put + SignalInc per CTA (GPU-initiated networking)
  NB_OP_LSA_LAT_PUT = 35,    // round trip: the CTA stores the message through an LSA pointer + system fence
  NB_OP_LSA_LAT_GET = 36,    // round trip: pointer chase, the CTA loads block k through an LSA pointer
};

#if NB_NCCL_DEVICE
// ---------------------------------------------------------------------------
// Kernels

// Bulk put (GET = 0: local -> the peer's window) or get (GET = 1: the peer's
// window -> local), the peer's address from ncclGetLsaPointer.
template <int SCOPE, int GET>
__global__ void k_lsa_bulk(ncclWindow_t win, uint8_t *local, int64_t size, int iters, int lsa_peer, int64_t *st) {
  int64_t groups, g, off, len;
  group_of(SCOPE, &groups, &g);
  chunk_of(size, groups, g, &off, &len);
  if (SCOPE == NB_SCOPE_WARP && threadIdx.x / 32 * 32 + 32 > blockDim.x) len = 0;  // a partial warp idles
  int lane, width;
  lane_of<SCOPE>(&lane, &width);
  uint8_t *remote = (uint8_t *)ncclGetLsaPointer(win, 0, lsa_peer);
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if (len > 0) {
      if (GET) group_copy(local + off, remote + off, len, lane, width);
      else group_copy(remote + off, local + off, len, lane, width);
    }
    // A put ends delivered, as NVSHMEM's _nbi + quiet (rma.cuh: stores end
    // delivered, every iteration).
    if (!GET) __threadfence_system();
  }
  stamp_end(st);
}

// The multi-CTA AllReduce (allreduce.cuh) with NCCL's pieces: the peers'
// windows through ncclGetLsaPointer, looked up by every CTA; CTA b of every
// rank meeting in LSA barrier b.
struct LsaPeers {
  ncclWindow_t src, scratch;
  ncclDevComm dc;
  __device__ void resolve(PeerPtrs &s, PeerPtrs &c) const {
    for (int q = threadIdx.x; q < dc.lsaSize; q += blockDim.x) {
      s.p[q] = (const float *)ncclGetLsaPointer(src, 0, q);
      c.p[q] = (const float *)ncclGetLsaPointer(scratch, 0, q);
    }
  }
  __device__ int rank() const { return dc.lsaRank; }
  __device__ int size() const { return dc.lsaSize; }
};

struct LsaBarrier {
  ncclDevComm dc;
  struct Session {
    ncclLsaBarrierSession<ncclCoopCta> bar;
    __device__ explicit Session(const LsaBarrier &b) : bar{ncclCoopCta(), b.dc, ncclTeamLsa(b.dc), b.dc.lsaBarrier, blockIdx.x} {}
    __device__ void sync() { bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel); }
    __device__ void end() {}
  };
};

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
    stamp(times, it);
    group_copy(remote, src, size, threadIdx.x, blockDim.x);
    __threadfence_system();
    __syncthreads();
  }
  stamp(times, iters);
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
// Host side of the families below: the windows' contents (setup,
// collective), the launches and the checks of the window.

static int nd_setup(Run *r) {
  const Args *a = r->a;
  int st = nd_ready(a->op == NB_OP_GIN_PUT_SIGNAL);  // collective
  if (st) return st;
  // The windows of this point: this PE's pattern in its source window (what
  // a peer's get or GIN put reads), the destination window poisoned.
  k_fill<<<1024, 256, 0, S.stream>>>((uint8_t *)g_nd.src, a->size, S.me, a->seed);
  CKLAUNCH("window fill");
  if (a->verify && (st = poison(g_nd.dst, a->size, "window poison"))) return st;
  if (a->op == NB_OP_GIN_PUT_SIGNAL) {
    k_gin_reset<<<1, 256, 0, S.stream>>>(g_nd.gdc, NB_MAX_CTAS + 1);
    CKLAUNCH("GIN signal reset");
  }
  CK(cudaStreamSynchronize(S.stream));
  if (a->op != NB_OP_GIN_PUT_SIGNAL && r->initiator && nd_lsa_peer(g_nd.dc, r->target) < 0)
    return fail(NB_UNREACHABLE, "PE %d is not in PE %d's LSA team (no load/store access through NCCL)", r->target, S.me);
  return 0;
}

// A put through NCCL lands in the target's window (g_nd.dst); a get in the
// initiator's destination (rma.cuh's kCheckGet).
static Region at_window_target(Run *r) { return rma_put_from(r) < 0 ? nowhere() : region(g_nd.dst, r->a->size, 1); }
// The payload, and every CTA that moved bytes signalled once per operation (GIN's signals).
static int put_pattern_gin_signals(Run *r, Region w, nb_result *res) {
  int rc = put_pattern(r, w, res);
  if (rc) return rc;
  int groups = (int)rma_active_groups(r->a);
  k_gin_read<<<1, 256, 0, S.stream>>>(g_nd.gdc, groups, (uint64_t *)S.scratch);
  CKLAUNCH("GIN signal read");
  return check_u64((const uint64_t *)S.scratch, groups, (uint64_t)r->ops, res);
}
NB_CHECK(kCheckWindowPut, "the initiator's pattern in the target's NCCL window", at_window_target, put_pattern);
NB_CHECK(kCheckGinPutSignals, "the pattern in the target's window, each CTA's GIN signal at the number of operations",
         at_window_target, put_pattern_gin_signals);

template <int GET>
static int launch_lsa(Run *r, int iters) {
  const Args *a = r->a;
  int lp = nd_lsa_peer(g_nd.dc, r->target);
  if (lp < 0) return fail(NB_UNREACHABLE, "PE %d is not in the LSA team", r->target);
  ncclWindow_t w = GET ? g_nd.wsrc : g_nd.wdst;
  uint8_t *local = GET ? S.dst : S.src;
  dim3 g(a->ctas), b(a->threads);
  with_scope(a->scope, [&](auto sc) {
    auto k = k_lsa_bulk<decltype(sc)::value, GET>;
    launched(r, k, a->ctas, a->threads);
    k<<<g, b, 0, S.stream>>>(w, local, a->size, iters, lp, S.times);
  });
  CKLAUNCH("LSA bulk kernel");
  return 0;
}

// The target waits for every signal up to the end of this launch; the
// initiator for one acknowledgement per CTA of every launch so far
// (r->launches of this point before this one).
static int launch_gin(Run *r, int iters) {
  const Args *a = r->a;
  int peer = r->initiator ? r->target : a->initiator;
  uint64_t want = (uint64_t)(r->ops + iters);
  uint64_t want_ack = (uint64_t)(r->launches + 1) * (uint64_t)rma_active_groups(a);
  k_gin_put_signal<<<a->ctas, a->threads, 0, S.stream>>>(g_nd.gdc, g_nd.wdst, g_nd.wsrc, a->size, iters, peer, r->initiator, want,
                                                         want_ack);
  CKLAUNCH("GIN put + signal kernel");
  return 0;
}

// nd_coll_setup is collective, the setup of a collective over the device
// API's windows (the LSA AllReduce's, NCCL's copy-engine collectives' in
// newer_nccl.cuh): its objects with every rank in the LSA team (need: what
// needs that, for the refusal), then this PE's source in its source window
// (fill: the collective's generator) and, where poison_out, the
// destination window poisoned, done before the peers read and write them.
static int nd_coll_setup(Run *r, int (*fill)(Run *, void *), const char *need, bool poison_out) {
  int st = nd_ready_all(need);
  if (st) return st;
  if ((st = fill(r, g_nd.src))) return st;
  if (poison_out && (st = poison(g_nd.dst, r->a->size, "window poison"))) return st;
  CK(cudaStreamSynchronize(S.stream));
  return 0;
}

static int nd_coll_launch(Run *r, int iters, int64_t *times) {
  const Args *a = r->a;
  int64_t n = a->size / 4;
  LsaPeers peers{g_nd.wsrc, g_nd.wdst, g_nd.dc};
  LsaBarrier bar{g_nd.dc};
  with_flag(a->impl == NB_IMPL_LSA_TWOSHOT, [&](auto two) {
    auto k = k_multicta<LsaPeers, LsaBarrier, decltype(two)::value>;
    launched(r, k, a->ctas, a->threads);
    k<<<a->ctas, a->threads, 0, S.stream>>>((float *)S.dst, peers, bar, n, iters, times);
  });
  CKLAUNCH("LSA allreduce");
  return 0;
}

static int nd_lat_setup(Run *r) {
  const Args *a = r->a;
  int st = nd_ready(0);  // collective
  if (st) return st;
  int64_t n = a->size;
  if (has(r, T_CHASE)) {
    Chain c = lat_chain(r);
    n = c.n * c.stride;
  }
  // lat_prepare wrote the pattern (and the chain) into S.src: the window
  // gets the same bytes, so the latency family's checks apply.
  CK(cudaMemcpyAsync(g_nd.src, S.src, n, cudaMemcpyDeviceToDevice, S.stream));
  if (a->verify && (st = poison(g_nd.dst, a->size, "window poison"))) return st;
  if (has(r, T_CHASE) && (st = l2_flush())) return st;  // the copy's last lines are not the chase's cache
  CK(cudaStreamSynchronize(S.stream));
  if (r->initiator && nd_lsa_peer(g_nd.dc, r->target) < 0)
    return fail(NB_UNREACHABLE, "PE %d is not in PE %d's LSA team (no load/store access through NCCL)", r->target, S.me);
  return 0;
}

// The round trip's put lands in the peer's window.
static Region at_window_peer(Run *r) { return S.me != r->a->peer ? nowhere() : region(g_nd.dst, r->a->size, 1); }
NB_CHECK(kCheckWindowLatPut, "the initiator's pattern in the peer's NCCL window", at_window_peer, pattern_of_initiator);

static int launch_lsa_lat_put(Run *r, int iters) {
  k_lsa_lat_put<<<1, r->a->threads, 0, S.stream>>>(g_nd.wdst, S.src, r->a->size, iters, nd_lsa_peer(g_nd.dc, r->target), S.times);
  CKLAUNCH("LSA put latency kernel");
  return 0;
}

static int launch_lsa_lat_get(Run *r, int iters) {
  const Args *a = r->a;
  Chain c = lat_chain(r);
  k_lsa_lat_get<<<1, a->threads, 0, S.stream>>>(g_nd.wsrc, S.dst, a->size, c.stride, c.n, S.cursor, iters, nd_lsa_peer(g_nd.dc, r->target),
                                                  S.times);
  CKLAUNCH("LSA get latency kernel");
  return 0;
}
#else
// Without NCCL's device headers every point of these operations is refused
// at validation (nd_headers), on every PE, before any of these could run.
static int nd_setup(Run *) { return nd_missing(); }
static int nd_check(Run *, nb_result *) { return nd_missing(); }
template <int GET>
static int launch_lsa(Run *, int) { return nd_missing(); }
static int launch_gin(Run *, int) { return nd_missing(); }
static int nd_coll_setup(Run *, int (*)(Run *, void *), const char *, bool) { return nd_missing(); }
static int nd_coll_launch(Run *, int, int64_t *) { return nd_missing(); }
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
    if (a->peer == a->initiator) return fail(NB_UNREACHABLE, "GIN put + signal needs two ranks");
  }
  if (a->op != NB_OP_GIN_PUT_SIGNAL && a->scope == NB_SCOPE_WARP && a->threads % 32) return fail(NB_ERR, "warp scope needs whole warps");
  return nd_state();
}

static int nd_active(Run *r) {
  if (r->a->op == NB_OP_GIN_PUT_SIGNAL) return S.me == r->a->initiator || S.me == r->a->peer;  // the target waits in every launch
  return rma_active(r);
}

static int nd_synced(Run *r) { return r->a->op == NB_OP_GIN_PUT_SIGNAL || rma_synced(r); }

static constexpr Family kND = {.name = "nccl-device",
                               .validate = nd_validate,
                               .active = nd_active,
                               .synced = nd_synced,
                               .cal_iters = 1,
                               .prepare = rma_prepare,
                               .setup = nd_setup,
                               .bytes = rma_bytes,
                               .work_set = rma_work_set};
NB_FAMILY(kND);

static constexpr OpEntry kNDOps[] = {
    {NB_OP_LSA_PUT, "rma.lsa_put", &kND, T_PAYLOAD | T_LOADSTORE, kCheckWindowPut, launch_lsa<0>},
    {NB_OP_LSA_GET, "rma.lsa_get", &kND, T_PAYLOAD | T_LOADSTORE, kCheckGet, launch_lsa<1>},
    {NB_OP_GIN_PUT_SIGNAL, "rma.gin_put_signal", &kND, T_PAYLOAD | T_NETWORK, kCheckGinPutSignals, launch_gin},
};
NB_CHECKED(kNDOps);

// --- latency: the latency family's roles, chain and checks, the message
// (and the chain) copied into this PE's source window at setup.

static int nd_lat_validate(Run *r) {
  int st = lat_validate(r);
  if (st) return st;
  if ((st = nd_headers())) return st;
  return nd_state();
}

static constexpr Family kNDLat = {.name = "nccl-device latency",
                                  .validate = nd_lat_validate,
                                  .active = lat_active,
                                  .synced = lat_synced,
                                  .cal_iters = 10,
                                  .kernel_timer = 1,
                                  .prepare = lat_prepare,
                                  .setup = nd_lat_setup,
                                  .before_launch = lat_before_launch,
                                  .bytes = lat_bytes,
                                  .work_set = lat_work_set};
NB_FAMILY(kNDLat);

static constexpr OpEntry kNDLatOps[] = {
    {NB_OP_LSA_LAT_PUT, "lat.lsa_put", &kNDLat, T_PAYLOAD | T_ROUNDTRIP | T_LOADSTORE, kCheckWindowLatPut, launch_lsa_lat_put},
    {NB_OP_LSA_LAT_GET, "lat.lsa_get", &kNDLat, T_PAYLOAD | T_ROUNDTRIP | T_LOADSTORE | T_CHASE, kCheckChased, launch_lsa_lat_get},
};
NB_CHECKED(kNDLatOps);
