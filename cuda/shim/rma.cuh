// rma.cuh: the RMA bandwidth family (bulk put/get, put + signal, scalar
// p/g, plain load/store, signal_add, and the copy references; the AMO
// atomics' rates are atomics.cuh's) and its entries
// in the dispatch table. Included by nvshbench.cu: one translation unit, one
// device link. A new RMA operation is a code in the enum below, its branch
// in a kernel (every dispatch on a code names its cases; an unhandled code
// does not compile) and one entry in kRMAOps with its traits, whose name the
// Go registration asks for (cuda.NewArgs("rma.<name>")).
//
// Roles (pair_roles): args.initiator issues towards args.peer; with bidir
// the peer issues towards the initiator at the same time (both start each
// launch together). A PE talking to itself (one PE) is initiator and
// target.
//
// Stores end delivered: every iteration of a store operation (put, put +
// signal, p, st, the SM copy into the peer) ends with quiet or a
// system-scope fence, so an operation's time covers its delivery and
// repeated stores to the same addresses cannot merge on the way and pass
// for bandwidth (above the link's rate, when only the launch's last
// operation waited).

// The family's operation codes: private to the shim (the Go side names
// operations, nb_args.op), unique over every family (cuda/ops_test.go),
// compile-time constants for the kernels' templates.
enum {
  NB_OP_PUT = 1,         // bulk putmem at args.scope; _nbi + quiet, or blocking
  NB_OP_GET = 2,         // bulk getmem
  NB_OP_P = 3,           // scalar p of args.elem-byte values
  NB_OP_G = 4,           // scalar g
  NB_OP_ST = 5,          // plain 16-byte stores through nvshmem_ptr
  NB_OP_LD = 6,          // plain 16-byte loads through nvshmem_ptr
  NB_OP_CE_COPY = 10,    // limit: copy engine (cudaMemcpyAsync) into the peer's buffer
  NB_OP_SM_COPY = 11,    // limit: SM copy kernel, local -> peer (writes remote)
  NB_OP_SM_COPY_READ = 12, // limit: SM copy kernel, peer -> local (reads remote)
  NB_OP_PUT_SIGNAL = 13, // bulk putmem_signal_nbi at args.scope (DeepEP's dispatch primitive)
  NB_OP_SIGNAL_ADD = 17, // nvshmemx_signal_op(NVSHMEM_SIGNAL_ADD) rate, one signal word per thread
  NB_OP_CE_COPY_PEER = 19, // the host-driven baseline: cudaMemcpyPeerAsync into the peer's buffer (its device named)
  NB_OP_PUT_INCAST = 20,   // incast: every PE but args.peer puts into its own slot of the peer's destination at once
};

// An incast's sender me writes slot incast_slot(me, target) of the target's
// destination: the PEs but the target, in PE order.
static inline int incast_slot(int me, int target) { return me < target ? me : me - 1; }
static inline int64_t incast_bytes(const Args *a) { return (int64_t)(S.npes - 1) * a->size; }

// One scope group moves len bytes with NVSHMEM's bulk call (shared with the
// latency kernels).
template <int OP, int SCOPE, int BLOCKING>
__device__ static inline void bulk_op(uint8_t *dst, const uint8_t *src, size_t len, int peer) {
  if (OP == NB_OP_PUT) {
    if (SCOPE == NB_SCOPE_BLOCK) {
      if (BLOCKING) nvshmemx_putmem_block(dst, src, len, peer);
      else nvshmemx_putmem_nbi_block(dst, src, len, peer);
    } else if (SCOPE == NB_SCOPE_WARP) {
      if (BLOCKING) nvshmemx_putmem_warp(dst, src, len, peer);
      else nvshmemx_putmem_nbi_warp(dst, src, len, peer);
    } else {
      if (BLOCKING) nvshmem_putmem(dst, src, len, peer);
      else nvshmem_putmem_nbi(dst, src, len, peer);
    }
  } else {
    if (SCOPE == NB_SCOPE_BLOCK) {
      if (BLOCKING) nvshmemx_getmem_block(dst, src, len, peer);
      else nvshmemx_getmem_nbi_block(dst, src, len, peer);
    } else if (SCOPE == NB_SCOPE_WARP) {
      if (BLOCKING) nvshmemx_getmem_warp(dst, src, len, peer);
      else nvshmemx_getmem_nbi_warp(dst, src, len, peer);
    } else {
      if (BLOCKING) nvshmem_getmem(dst, src, len, peer);
      else nvshmem_getmem_nbi(dst, src, len, peer);
    }
  }
}

// One scope group puts len bytes and adds 1 to the target's signal word.
template <int SCOPE>
__device__ static inline void put_signal_op(uint8_t *dst, const uint8_t *src, size_t len, uint64_t *sig, int peer) {
  if (SCOPE == NB_SCOPE_BLOCK) nvshmemx_putmem_signal_nbi_block(dst, src, len, sig, 1, NVSHMEM_SIGNAL_ADD, peer);
  else if (SCOPE == NB_SCOPE_WARP) nvshmemx_putmem_signal_nbi_warp(dst, src, len, sig, 1, NVSHMEM_SIGNAL_ADD, peer);
  else nvshmem_putmem_signal_nbi(dst, src, len, sig, 1, NVSHMEM_SIGNAL_ADD, peer);
}

// One scope group's share of every operation, iters times, stamped: the
// bulk kernel's body (newer.cuh's TMA-backed kernel runs it too).
template <int OP, int SCOPE, int BLOCKING>
__device__ static inline void bulk_loop(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, uint64_t *sig, int64_t *st) {
  int64_t groups, g, off, len;
  group_of(SCOPE, &groups, &g);
  chunk_of(size, groups, g, &off, &len);
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if (len > 0) {
      if constexpr (OP == NB_OP_PUT_SIGNAL) put_signal_op<SCOPE>(dst + off, src + off, len, sig + g, peer);
      else if constexpr (OP == NB_OP_PUT || OP == NB_OP_GET) bulk_op<OP, SCOPE, BLOCKING>(dst + off, src + off, len, peer);
      else static_assert(unhandled<OP>, "a bulk operation without a branch");
    }
    if (OP != NB_OP_GET && !BLOCKING) nvshmem_quiet();  // a put ends delivered
  }
  if (OP == NB_OP_GET && !BLOCKING) nvshmem_quiet();  // gets pipeline; every byte has landed at the end
  stamp_end(st);
}

template <int OP, int SCOPE, int BLOCKING>
__global__ void k_bulk(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, uint64_t *sig, int64_t *st) {
  bulk_loop<OP, SCOPE, BLOCKING>(dst, src, size, iters, peer, sig, st);
}

// Scalar p / g: thread t handles elements t, t+T, ... (coalesced).
template <typename T> __device__ static inline void p1(T *d, T v, int pe);
template <> __device__ inline void p1<uint8_t>(uint8_t *d, uint8_t v, int pe) { nvshmem_uint8_p(d, v, pe); }
template <> __device__ inline void p1<uint16_t>(uint16_t *d, uint16_t v, int pe) { nvshmem_uint16_p(d, v, pe); }
template <> __device__ inline void p1<uint32_t>(uint32_t *d, uint32_t v, int pe) { nvshmem_uint32_p(d, v, pe); }
template <> __device__ inline void p1<uint64_t>(uint64_t *d, uint64_t v, int pe) { nvshmem_uint64_p(d, v, pe); }
template <typename T> __device__ static inline T g1(const T *s, int pe);
template <> __device__ inline uint8_t g1<uint8_t>(const uint8_t *s, int pe) { return nvshmem_uint8_g(s, pe); }
template <> __device__ inline uint16_t g1<uint16_t>(const uint16_t *s, int pe) { return nvshmem_uint16_g(s, pe); }
template <> __device__ inline uint32_t g1<uint32_t>(const uint32_t *s, int pe) { return nvshmem_uint32_g(s, pe); }
template <> __device__ inline uint64_t g1<uint64_t>(const uint64_t *s, int pe) { return nvshmem_uint64_g(s, pe); }

template <typename T, int OP>
__global__ void k_scalar(T *dst, const T *src, int64_t n, int iters, int peer, int64_t *st) {
  int64_t t0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    for (int64_t i = t0; i < n; i += stride) {
      if constexpr (OP == NB_OP_P) p1<T>(dst + i, src[i], peer);
      else if constexpr (OP == NB_OP_G) dst[i] = g1<T>(src + i, peer);
      else static_assert(unhandled<OP>, "a scalar operation without a branch");
    }
    if (OP == NB_OP_P) nvshmem_quiet();  // the stores end delivered
  }
  stamp_end(st);
}

// Plain loads/stores through a mapped pointer: 16-byte vectors, a tail of
// bytes. Used for st, ld and the SM copy references. REMOTE_DST: the stores
// go to the peer, and every iteration ends with a system-scope fence, as a
// put ends with quiet: the time covers the stores' delivery, not just their
// issue. A template parameter, not an argument: with the fence's branch in
// the loop the loads' kernel compiles larger and runs slower; as a
// template the loads' kernel has no trace of the stores' fence.
//
// The loop is group_copy's over the grid, written out: k_copy calling
// group_copy compiled to PTX equal but for one instruction, yet ran slower
// per iteration at L2-resident sizes.
template <int REMOTE_DST>
__global__ void k_copy(uint8_t *__restrict__ dst, const uint8_t *__restrict__ src, int64_t size, int iters, uint32_t zero, int64_t *st) {
  int64_t n16 = size / 16;
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const uint4 *s4 = (const uint4 *)src;
  uint4 *d4 = (uint4 *)dst;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    int64_t i = t;
    for (; i + 3 * stride < n16; i += 4 * stride) {
      uint4 a = s4[i], b = s4[i + stride], c = s4[i + 2 * stride], d = s4[i + 3 * stride];
      // k == i (zero is 0), but the compiler cannot know: every store waits
      // for all four loads, so the four are in flight together.
      // ptxas otherwise chose per build whether to store the first vector
      // before loading the others (one load in flight): code elsewhere in
      // the loop (the stamps') tipped it, and the copy slowed.
      int64_t k = i + (int64_t)((a.w ^ b.w ^ c.w ^ d.w) & zero);
      d4[k] = a;
      d4[k + stride] = b;
      d4[k + 2 * stride] = c;
      d4[k + 3 * stride] = d;
    }
    for (; i < n16; i += stride) d4[i] = s4[i];
    for (int64_t j = n16 * 16 + t; j < size; j += stride) dst[j] = src[j];
    if constexpr (REMOTE_DST) __threadfence_system();
  }
  stamp_end(st);
}

// signal_add: thread t adds 1 to signal word t of the peer's uint64 array
// (the atomics of NVSHMEM's AMO API: atomics.cuh).
__global__ void k_signal_add(uint64_t *slots, int iters, int peer, int64_t *st) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) nvshmemx_signal_op(slots + t, 1, NVSHMEM_SIGNAL_ADD, peer);
  nvshmem_quiet();
  stamp_end(st);
}

// ---------------------------------------------------------------------------
static int64_t rma_groups(const Args *a) { return scope_groups(a); }

// Groups that move at least one byte (and so signal once per operation).
static int64_t rma_active_groups(const Args *a) {
  int64_t c = chunk_bytes(a->size, rma_groups(a));
  return (a->size + c - 1) / c;
}

static int rma_validate(Run *r) {
  const Args *a = r->a;
  int me = S.me;
  pair_roles(r, a->bidir);
  if (a->op == NB_OP_PUT_INCAST) {  // every PE but the target sends to it
    if (S.npes < 2) return fail(NB_ERR, "an incast needs two PEs");
    if (a->initiator == a->peer) return fail(NB_ERR, "an incast's timed initiator must be a sender, not its target PE %d", a->peer);
    if (a->size > 0 && incast_bytes(a) > S.buf)
      return fail(NB_ERR, "an incast of %lld bytes from %d PEs needs %lld bytes at its target; the buffer holds %lld", (long long)a->size,
                  S.npes - 1, (long long)incast_bytes(a), (long long)S.buf);
    r->target = me == a->peer ? -1 : a->peer;
    r->initiator = r->target >= 0;
  }
  if (a->size <= 0 || a->size > S.buf) return fail(NB_ERR, "size %lld outside 1..%lld", (long long)a->size, (long long)S.buf);
  if (a->ctas <= 0 || a->threads <= 0 || a->threads > 1024) return fail(NB_ERR, "launch %d x %d is invalid", a->ctas, a->threads);
  if (a->bidir && a->peer == a->initiator) return fail(NB_ERR, "bidirectional transfers need two PEs");
  if (a->op == NB_OP_P || a->op == NB_OP_G) {
    if (a->elem != 1 && a->elem != 2 && a->elem != 4 && a->elem != 8) return fail(NB_ERR, "element size %d: want 1, 2, 4 or 8", a->elem);
    if (a->size % a->elem) return fail(NB_ERR, "size %lld is not a multiple of the element size %d", (long long)a->size, a->elem);
  }
  if (has(r, T_COUNTERS) && (int64_t)a->ctas * a->threads * 8 > S.buf) return fail(NB_ERR, "too many threads for the atomic counters");
  if (a->op == NB_OP_PUT_SIGNAL && a->scope == NB_SCOPE_WARP && a->threads % 32) return fail(NB_ERR, "warp scope needs whole warps");
  if (a->op == NB_OP_PUT_SIGNAL && rma_groups(a) * 8 > S.buf) return fail(NB_ERR, "too many groups for the signal words");
  if (r->initiator && has(r, T_LOADSTORE) && nvshmem_ptr(S.dst, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d (no P2P mapping)", r->target, me);
  return 0;
}

static int rma_active(Run *r) { return r->initiator; }
static int rma_synced(Run *r) { return r->a->bidir || r->a->op == NB_OP_PUT_INCAST; }

static int rma_prepare(Run *r) {
  const Args *a = r->a;
  if (r->e->check->reset) return r->e->check->reset(r);  // the atomics' counters
  if (has(r, T_COUNTERS)) {
    k_zero_u64<<<256, 256, 0, S.stream>>>((uint64_t *)S.dst, (int64_t)a->ctas * a->threads);
    CKLAUNCH("counter reset");
    return 0;
  }
  if (a->op == NB_OP_PUT_SIGNAL) {
    k_zero_u64<<<256, 256, 0, S.stream>>>((uint64_t *)S.scratch, rma_groups(a));
    CKLAUNCH("signal reset");
  }
  int rc = fill_src(a->size, a->seed);
  if (!rc && a->verify) rc = poison_dst(a->op == NB_OP_PUT_INCAST ? incast_bytes(a) : a->size);
  return rc;
}

// The PE whose pattern a put's target holds in its destination (-1: none:
// this PE is not a target), and a get's (-1: this PE did not initiate).
static int rma_put_from(Run *r) {
  const Args *a = r->a;
  if (S.me == a->peer) return a->initiator;
  if (a->bidir && S.me == a->initiator) return a->peer;
  return -1;
}
static int rma_get_from(Run *r) { return r->initiator ? r->target : -1; }

// The checks of the RMA family (and of NCCL's LSA put/get, nccldev.cuh):
// where each result lands on this PE and what it must hold there.
static Region at_put_target(Run *r) { return rma_put_from(r) < 0 ? nowhere() : region(S.dst, r->a->size, 1); }
static Region at_get_initiator(Run *r) { return rma_get_from(r) < 0 ? nowhere() : region(S.dst, r->a->size, 1); }
static Region at_counters(Run *r) {
  return rma_put_from(r) < 0 ? nowhere() : region(S.dst, (int64_t)r->a->ctas * r->a->threads, 8);
}
static int put_pattern(Run *r, Region w, nb_result *res) {
  return check_bytes((const uint8_t *)w.p, w.n, 0, rma_put_from(r), r->a->seed, res);
}
static int get_pattern(Run *r, Region w, nb_result *res) {
  return check_bytes((const uint8_t *)w.p, w.n, 0, rma_get_from(r), r->a->seed, res);
}
// Every counter saw one increment per operation of its initiator.
static int counted_ops(Run *r, Region w, nb_result *res) { return check_u64((const uint64_t *)w.p, w.n, (uint64_t)r->ops, res); }
// The payload, and every group that moved bytes signalled once per operation.
static int put_pattern_signals(Run *r, Region w, nb_result *res) {
  int rc = put_pattern(r, w, res);
  if (rc) return rc;
  return check_u64((const uint64_t *)S.scratch, rma_active_groups(r->a), (uint64_t)r->ops, res);
}
// An incast's target holds every other PE's pattern, each in its slot.
static Region at_incast_target(Run *r) { return S.me != r->a->peer ? nowhere() : region(S.dst, incast_bytes(r->a), 1); }
static int incast_patterns(Run *r, Region w, nb_result *res) {
  const Args *a = r->a;
  for (int q = 0; q < S.npes; q++) {
    if (q == a->peer) continue;
    int rc = check_bytes((const uint8_t *)w.p + (int64_t)incast_slot(q, a->peer) * a->size, a->size, 0, q, a->seed, res);
    if (rc) return rc;
  }
  return 0;
}
NB_CHECK(kCheckPut, "the initiator's pattern in the target's destination", at_put_target, put_pattern);
NB_CHECK(kCheckIncast, "every other PE's pattern in its slot of the target's destination", at_incast_target, incast_patterns);
NB_CHECK(kCheckGet, "the target's pattern in the initiator's destination", at_get_initiator, get_pattern);
NB_CHECK(kCheckCounters, "every counter at the number of operations", at_counters, counted_ops);
NB_CHECK(kCheckPutSignals, "the pattern at the target, each group's signal at the number of operations", at_put_target,
         put_pattern_signals);

// A counter's bytes: the atomics' args.elem (2, 4 or 8: atomics.cuh checks it), signal_add's 8.
static int64_t counter_bytes(const Args *a) { return a->op == NB_OP_SIGNAL_ADD ? 8 : a->elem; }

// Per operation: the payload, or the word of a counter operation.
static int64_t rma_bytes(Run *r) {
  if (!r->initiator) return 0;
  return has(r, T_PAYLOAD) ? r->a->size : counter_bytes(r->a);
}

// The largest buffer one GPU serves: the target's destination of a store,
// the peer's source of a load, each of a size (the counters of atomics).
// A grid that runs in waves loops each wave over its share (wave_share).
static int64_t rma_work_set(Run *r) {
  const Args *a = r->a;
  if (a->op == NB_OP_PUT_INCAST) return incast_bytes(a);  // what the target serves
  return has(r, T_COUNTERS) ? (int64_t)a->ctas * a->threads * counter_bytes(a) : wave_share(r, a->size);
}

static constexpr Family kRMA = {.name = "rma",
                                .validate = rma_validate,
                                .active = rma_active,
                                .synced = rma_synced,
                                .cal_iters = 1,
                                .prepare = rma_prepare,
                                .bytes = rma_bytes,
                                .work_set = rma_work_set};
NB_FAMILY(kRMA);

// --- launches
template <int OP>
static int launch_bulk(Run *r, int iters) {
  const Args *a = r->a;
  dim3 g(a->ctas), b(a->threads);
  cudaStream_t s = S.stream;
  uint8_t *dst = S.dst, *src = S.src;
  uint64_t *sig = (uint64_t *)S.scratch;
  int peer = r->target;
  with_scope(a->scope, [&](auto sc) {
    with_flag(OP != NB_OP_PUT_SIGNAL && a->blocking, [&](auto blocking) {
      auto k = k_bulk<OP, decltype(sc)::value, decltype(blocking)::value>;
      launched(r, k, a->ctas, a->threads);
      k<<<g, b, 0, s>>>(dst, src, a->size, iters, peer, sig, S.times);
    });
  });
  CKLAUNCH("bulk kernel");
  return 0;
}

// An incast's sender: the non-blocking bulk put into its slot of the
// target's destination, as launch_bulk's (every sender starts each launch
// together: rma_synced).
static int launch_incast(Run *r, int iters) {
  const Args *a = r->a;
  dim3 g(a->ctas), b(a->threads);
  uint8_t *dst = S.dst + (int64_t)incast_slot(S.me, r->target) * a->size;
  with_scope(a->scope, [&](auto sc) {
    auto k = k_bulk<NB_OP_PUT, decltype(sc)::value, 0>;
    launched(r, k, a->ctas, a->threads);
    k<<<g, b, 0, S.stream>>>(dst, S.src, a->size, iters, r->target, (uint64_t *)S.scratch, S.times);
  });
  CKLAUNCH("incast kernel");
  return 0;
}

// cudaMemcpyPeerAsync names the devices: the one that owns the peer's
// mapped buffer (its pointer's attributes) and this PE's.
static int launch_ce_peer(Run *r, int iters) {
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  if (!rd) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  cudaPointerAttributes at;
  CK(cudaPointerGetAttributes(&at, rd));
  int mine = 0;
  CK(cudaGetDevice(&mine));
  for (int i = 0; i < iters; i++) CK(cudaMemcpyPeerAsync(rd, at.device, S.src, mine, r->a->size, S.stream));
  return 0;
}

template <int OP>
static int launch_scalar(Run *r, int iters) {
  const Args *a = r->a;
  dim3 g(a->ctas), b(a->threads);
  int64_t n = a->size / a->elem;
#define SCALAR(T)                                                                          \
  launched(r, k_scalar<T, OP>, a->ctas, a->threads);                                       \
  k_scalar<T, OP><<<g, b, 0, S.stream>>>((T *)S.dst, (const T *)S.src, n, iters, r->target, S.times);
  switch (a->elem) {  // rma_validate admits 1, 2, 4 and 8 only
  case 1: SCALAR(uint8_t) break;
  case 2: SCALAR(uint16_t) break;
  case 4: SCALAR(uint32_t) break;
  case 8: SCALAR(uint64_t) break;
  }
#undef SCALAR
  CKLAUNCH("scalar p/g kernel");
  return 0;
}

// Stores into the peer's destination (st, SM copy).
static int launch_store(Run *r, int iters) {
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  if (!rd) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  launched(r, k_copy<1>, r->a->ctas, r->a->threads);
  k_copy<1><<<r->a->ctas, r->a->threads, 0, S.stream>>>(rd, S.src, r->a->size, iters, 0, S.times);
  CKLAUNCH("store copy kernel");
  return 0;
}

// Loads from the peer's source (ld, SM copy read).
static int launch_load(Run *r, int iters) {
  const uint8_t *rs = (const uint8_t *)nvshmem_ptr(S.src, r->target);
  if (!rs) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  launched(r, k_copy<0>, r->a->ctas, r->a->threads);
  k_copy<0><<<r->a->ctas, r->a->threads, 0, S.stream>>>(S.dst, rs, r->a->size, iters, 0, S.times);
  CKLAUNCH("load copy kernel");
  return 0;
}

static int launch_ce(Run *r, int iters) {
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  if (!rd) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  for (int i = 0; i < iters; i++) CK(cudaMemcpyAsync(rd, S.src, r->a->size, cudaMemcpyDeviceToDevice, S.stream));
  return 0;
}

static int launch_signal_add(Run *r, int iters) {
  launched(r, k_signal_add, r->a->ctas, r->a->threads);
  k_signal_add<<<r->a->ctas, r->a->threads, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, S.times);
  CKLAUNCH("signal_add kernel");
  return 0;
}

static constexpr OpEntry kRMAOps[] = {
    {NB_OP_PUT, "rma.put", &kRMA, T_PAYLOAD, kCheckPut, launch_bulk<NB_OP_PUT>},
    {NB_OP_GET, "rma.get", &kRMA, T_PAYLOAD, kCheckGet, launch_bulk<NB_OP_GET>},
    {NB_OP_PUT_SIGNAL, "rma.put_signal", &kRMA, T_PAYLOAD, kCheckPutSignals, launch_bulk<NB_OP_PUT_SIGNAL>},
    {NB_OP_P, "rma.p", &kRMA, T_PAYLOAD, kCheckPut, launch_scalar<NB_OP_P>},
    {NB_OP_G, "rma.g", &kRMA, T_PAYLOAD, kCheckGet, launch_scalar<NB_OP_G>},
    {NB_OP_ST, "rma.st", &kRMA, T_PAYLOAD | T_LOADSTORE, kCheckPut, launch_store},
    {NB_OP_LD, "rma.ld", &kRMA, T_PAYLOAD | T_LOADSTORE, kCheckGet, launch_load},
    {NB_OP_SIGNAL_ADD, "rma.signal_add", &kRMA, T_COUNTERS, kCheckCounters, launch_signal_add},
    {NB_OP_CE_COPY, "rma.ce_copy", &kRMA, T_PAYLOAD | T_LOADSTORE | T_HOST, kCheckPut, launch_ce},
    {NB_OP_CE_COPY_PEER, "rma.ce_copy_peer", &kRMA, T_PAYLOAD | T_LOADSTORE | T_HOST, kCheckPut, launch_ce_peer},
    {NB_OP_SM_COPY, "rma.sm_copy", &kRMA, T_PAYLOAD | T_LOADSTORE, kCheckPut, launch_store},
    {NB_OP_SM_COPY_READ, "rma.sm_copy_read", &kRMA, T_PAYLOAD | T_LOADSTORE, kCheckGet, launch_load},
    {NB_OP_PUT_INCAST, "rma.put_incast", &kRMA, T_PAYLOAD, kCheckIncast, launch_incast},
};
NB_CHECKED(kRMAOps);
