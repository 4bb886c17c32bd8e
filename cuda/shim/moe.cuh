// moe.cuh: the MoE family: expert-parallel dispatch (each token to the
// ranks of its top-k experts) and combine (the expert outputs back to the
// token's rank, weighted and summed), the same tokens, routing and checks
// for three implementations (args.impl):
//  - NVSHMEM (NB_IMPL_NVSHMEM_DEVICE; DeepEP's primitive mix): a warp per
//    message, its slot from a remote atomic on the destination's counter
//    of (expert, source), putmem_nbi_warp of the payload and its header,
//    quiet, and the last warp of a (destination, expert) publishing the
//    count with a signal; the receiver waits on the signals;
//  - NCCL's device API (NB_IMPL_LSA_ONESHOT): the same kernels, the peer's
//    window through ncclGetLsaPointer: 16-byte stores, a system-scope
//    atomic, a released store of the signal, acquiring loads;
//  - NCCL from the host (NB_IMPL_NCCL; what frameworks do): a pack kernel,
//    the counts exchanged, ncclSend/ncclRecv per peer in one group (an
//    all-to-all-v), an unpack kernel; all inside the timed launch.
// Modes (args.moe_mode): ll, one message per (token, expert) selection;
// normal, one message per (token, destination rank) carrying its local
// experts, fanned out into the per-expert layout on arrival.
//
// Dispatch ends when every message is in its expert's slot and every count
// is known at the receiver; combine when the weighted sums are on the
// tokens' ranks. Every PE computes every rank's routing (moe_route.h) and
// the layout of the buffers from it, the same on every PE.

#include "moe_route.h"

enum { NB_OP_MOE_DISPATCH = 51, NB_OP_MOE_COMBINE = 52 };
enum { MOE_LL = 0, MOE_NORMAL = 1 };
enum { MOE_BF16 = 0, MOE_FP8 = 1 };  // args.dtype of a MoE point (the dispatched tokens; combine returns bf16)

// A message's header: 16 bytes (ll); normal mode's (32 bytes) lists the
// token's selections on the destination.
struct MoeMeta {
  int32_t src, token, expert, k;
};
struct MoeMetaN {
  int32_t src, token, n, pad;
  int16_t k[8];
};
static_assert(sizeof(MoeMeta) == 16 && sizeof(MoeMetaN) == 32, "MoE headers");

// The expert's output for (src, token, expert): small integers, exact in
// bf16, so a weighted sum is checked to bf16's precision.
__host__ __device__ static inline float moe_f(int src, int token, int expert, int64_t i) {
  return (float)(((src * 7 + token * 3 + expert * 5 + (int)(i & 0xffff)) & 15) - 8);
}

// --- The layout: what every PE computes the same way from the routing.
// Remote buffer (the same offsets on every PE): counters, signals, the
// per-expert slots and their headers, normal mode's arrival slots, the
// combine slots. Local buffer: tables, done counters, epochs, the output,
// NCCL's staging.
struct MoeLayout {
  int n, el, t, k, e, mode;
  int64_t tok;   // dispatch payload of a token (bf16: hidden x 2; fp8: hidden + hidden/128 x 4 scales)
  int64_t out;   // combine payload (bf16 hidden)
  int64_t sz;    // a slot: the larger of the two
  int64_t max_slots, max_arr;
  int64_t o_ctr, o_sig, o_csig, o_slot, o_smeta, o_arr, o_ameta, o_comb, remote;
  int64_t o_done, o_epoch, o_route, o_w, o_cnt, o_roff, o_aoff, o_pairs, o_list, o_tab, o_seen, o_outp, o_send, o_recv, local;
};
// The local counters (uint64 words at o_done): dispatch ll per (dest,
// expert), dispatch normal per dest, combine per source, fan-out per
// (expert, source).
__host__ __device__ static inline int64_t moe_d_norm(const MoeLayout &L) { return (int64_t)L.n * L.el; }
__host__ __device__ static inline int64_t moe_d_comb(const MoeLayout &L) { return (int64_t)L.n * L.el + L.n; }
__host__ __device__ static inline int64_t moe_d_fan(const MoeLayout &L) { return (int64_t)L.n * L.el + 2 * L.n; }
static int64_t moe_done_words(const MoeLayout &L) { return 2 * (int64_t)L.n * L.el + 2 * L.n; }

// Host copies of the routing (every rank's), rebuilt per point.
struct MoeHost {
  int32_t *route;  // n x t x k experts
  float *w;        // n x t x k weights
  int64_t *cnt;    // n x e: tokens of rank r that select expert e
  int64_t *roff;   // n(dest) x el x n(src): the slot where (expert, source)'s region starts at dest
  int64_t *pairs;  // n(src) x n(dest): tokens of src with an expert on dest (normal messages)
  int64_t *aoff;   // n(dest) x n(src): where src's arrivals start at dest
};
static MoeHost g_moe;

static void moe_free(void) {
  free(g_moe.route), free(g_moe.w), free(g_moe.cnt), free(g_moe.roff), free(g_moe.pairs), free(g_moe.aoff);
  memset(&g_moe, 0, sizeof g_moe);
}

static int64_t align256(int64_t x) { return (x + 255) & ~255ll; }

// The j-th slot of (expert l, source src) at dest, and the arrivals.
static int64_t moe_hroff(const MoeLayout &L, int d, int l, int src) { return g_moe.roff[((int64_t)d * L.el + l) * L.n + src]; }
static int64_t moe_hcnt(const MoeLayout &L, int r, int e) { return g_moe.cnt[(int64_t)r * L.e + e]; }
static int64_t moe_hpairs(const MoeLayout &L, int src, int d) { return g_moe.pairs[src * L.n + d]; }
static const int32_t *moe_hroute(const MoeLayout &L, int r, int t) { return g_moe.route + ((int64_t)r * L.t + t) * L.k; }
// Messages src gets back from d in a combine (as moe_back).
static int64_t moe_hback(const MoeLayout &L, int src, int d) {
  if (L.mode == MOE_NORMAL) return moe_hpairs(L, src, d);
  int64_t c = 0;
  for (int l = 0; l < L.el; l++) c += moe_hcnt(L, src, d * L.el + l);
  return c;
}

// moe_plan computes every rank's routing and the layout (local, no GPU).
static int moe_plan(const Args *a, MoeLayout *L) {
  memset(L, 0, sizeof *L);
  L->n = S.npes, L->t = a->tokens, L->k = a->topk, L->e = a->experts, L->mode = a->moe_mode;
  if (L->t <= 0 || L->k <= 0 || L->e <= 0 || a->hidden <= 0) return fail(NB_ERR, "MoE: tokens, top-k, experts and hidden must be positive");
  if (L->k > L->e) return fail(NB_ERR, "MoE: top-k %d > %d experts", L->k, L->e);
  if (L->k > 8) return fail(NB_ERR, "MoE: top-k %d: at most 8", L->k);
  if (L->e % L->n) return fail(NB_ERR, "MoE: %d experts do not divide by %d PEs", L->e, L->n);
  if (L->n > 64) return fail(NB_ERR, "MoE: at most 64 PEs");
  if (a->dtype == MOE_FP8 && a->hidden % 128) return fail(NB_ERR, "MoE: fp8 needs hidden a multiple of 128");
  if (a->moe_mode != MOE_LL && a->moe_mode != MOE_NORMAL) return fail(NB_ERR, "MoE: mode %d", a->moe_mode);
  L->el = L->e / L->n;
  L->tok = a->dtype == MOE_FP8 ? (int64_t)a->hidden + a->hidden / 128 * 4 : (int64_t)a->hidden * 2;
  L->out = (int64_t)a->hidden * 2;
  L->sz = L->tok > L->out ? L->tok : L->out;
  moe_free();
  int n = L->n, t = L->t, k = L->k, e = L->e, el = L->el;
  g_moe.route = (int32_t *)malloc(sizeof(int32_t) * n * t * k);
  g_moe.w = (float *)malloc(sizeof(float) * n * t * k);
  g_moe.cnt = (int64_t *)calloc((size_t)n * e, sizeof(int64_t));
  g_moe.roff = (int64_t *)calloc((size_t)n * el * n, sizeof(int64_t));
  g_moe.pairs = (int64_t *)calloc((size_t)n * n, sizeof(int64_t));
  g_moe.aoff = (int64_t *)calloc((size_t)n * n, sizeof(int64_t));
  uint64_t *cdf = (uint64_t *)malloc(sizeof(uint64_t) * e);
  int32_t *order = (int32_t *)malloc(sizeof(int32_t) * e);
  if (!g_moe.route || !g_moe.w || !g_moe.cnt || !g_moe.roff || !g_moe.pairs || !g_moe.aoff || !cdf || !order) {
    free(cdf), free(order);
    return fail(NB_ERR, "MoE: no host memory for the routing");
  }
  int skewed = a->zipf > 0;
  if (skewed) moe_zipf(a->zipf, e, cdf), moe_order(a->seed, e, order);
  for (int r = 0; r < n; r++)
    for (int tk = 0; tk < t; tk++) {
      int32_t *ex = g_moe.route + ((int64_t)r * t + tk) * k;
      moe_route_token(a->seed, r, tk, e, k, skewed, cdf, order, ex, g_moe.w + ((int64_t)r * t + tk) * k);
      uint64_t seen = 0;
      for (int j = 0; j < k; j++) {
        g_moe.cnt[(int64_t)r * e + ex[j]]++;
        int d = ex[j] / el;
        if (!(seen >> d & 1)) seen |= 1ull << d, g_moe.pairs[r * n + d]++;
      }
    }
  free(cdf), free(order);
  for (int d = 0; d < n; d++) {
    int64_t s = 0;
    for (int l = 0; l < el; l++)
      for (int src = 0; src < n; src++) {
        g_moe.roff[((int64_t)d * el + l) * n + src] = s;
        s += moe_hcnt(*L, src, d * el + l);
      }
    int64_t q = 0;
    for (int src = 0; src < n; src++) g_moe.aoff[d * n + src] = q, q += moe_hpairs(*L, src, d);
    L->max_slots = L->max_slots > s ? L->max_slots : s;
    L->max_arr = L->max_arr > q ? L->max_arr : q;
  }
  int64_t o = 0;
  L->o_ctr = o, o = align256(o + 8 * ((int64_t)el * n + n));
  L->o_sig = o, o = align256(o + 8 * ((int64_t)el * n + n));
  L->o_csig = o, o = align256(o + 8 * n);
  L->o_slot = o, o = align256(o + L->max_slots * L->sz);
  L->o_smeta = o, o = align256(o + L->max_slots * 16);
  L->o_arr = o, o = align256(o + (L->mode == MOE_NORMAL ? L->max_arr * L->sz : 0));
  L->o_ameta = o, o = align256(o + (L->mode == MOE_NORMAL ? L->max_arr * 32 : 0));
  L->o_comb = o, o = align256(o + (int64_t)t * (L->mode == MOE_NORMAL ? n : k) * L->out);
  L->remote = o;
  int64_t ntk = (int64_t)n * t * k;
  int64_t rows = (int64_t)t * k + (int64_t)t * n + L->max_slots + L->max_arr;  // the largest list of a step
  o = 0;
  L->o_done = o, o = align256(o + 8 * moe_done_words(*L));
  L->o_epoch = o, o = align256(o + 8 * NB_MAX_CTAS);
  L->o_route = o, o = align256(o + 4 * ntk);
  L->o_w = o, o = align256(o + 4 * ntk);
  L->o_cnt = o, o = align256(o + 8 * (int64_t)n * e);
  L->o_roff = o, o = align256(o + 8 * (int64_t)n * el * n);
  L->o_aoff = o, o = align256(o + 8 * (int64_t)n * n);
  L->o_pairs = o, o = align256(o + 8 * (int64_t)n * n);
  L->o_list = o, o = align256(o + 64 * rows);   // headers (and normal combine's slot lists)
  L->o_tab = o, o = align256(o + 16 * 4 * rows + 8 * (int64_t)t * (k > n ? k : n));  // NCCL's gather / scatter tables and positions
  L->o_seen = o, o = align256(o + 4 * (int64_t)el * n * t);
  L->o_outp = o, o = align256(o + (int64_t)t * L->out);
  L->o_send = o, o = align256(o + rows * (L->sz + 32));
  L->o_recv = o, o = align256(o + rows * (L->sz + 32));
  L->local = o;
  return 0;
}

// --- Transports: how a device-initiated kernel reaches a peer's buffer.

// NVSHMEM: the remote buffer is the symmetric S.dst.
struct MoeNvshmem {
  uint8_t *base;  // symmetric: the same address names each PE's copy
  __device__ void put_warp(int pe, int64_t off, const void *src, int64_t n) const { nvshmemx_putmem_nbi_warp(base + off, src, n, pe); }
  __device__ uint64_t fetch_add(int pe, int64_t off, uint64_t v) const { return nvshmem_uint64_atomic_fetch_add((uint64_t *)(base + off), v, pe); }
  __device__ void complete() const { nvshmem_quiet(); }
  __device__ void signal(int pe, int64_t off, uint64_t v) const { nvshmemx_signal_op((uint64_t *)(base + off), v, NVSHMEM_SIGNAL_SET, pe); }
  __device__ void wait_ge(int64_t off, uint64_t v) const { nvshmem_signal_wait_until((uint64_t *)(base + off), NVSHMEM_CMP_GE, v); }
  __device__ uint8_t *mine(int64_t off) const { return base + off; }
};

#if NB_NCCL_DEVICE
// NCCL's device API: the remote buffer is an NCCL window, every peer's copy
// through ncclGetLsaPointer.
struct MoeLsa {
  ncclWindow_t win;
  ncclDevComm dc;
  int me;
  __device__ uint8_t *at(int pe, int64_t off) const {
    return (uint8_t *)ncclGetLsaPointer(win, off, ncclTeamRankToLsa(dc, ncclTeamWorld(dc), pe));
  }
  __device__ void put_warp(int pe, int64_t off, const void *src, int64_t n) const {
    group_copy(at(pe, off), (const uint8_t *)src, n, threadIdx.x % 32, 32);
  }
  __device__ uint64_t fetch_add(int pe, int64_t off, uint64_t v) const {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> x(*(uint64_t *)at(pe, off));
    return x.fetch_add(v, cuda::memory_order_relaxed);
  }
  __device__ void complete() const { __threadfence_system(); }
  __device__ void signal(int pe, int64_t off, uint64_t v) const {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> x(*(uint64_t *)at(pe, off));
    x.store(v, cuda::memory_order_release);
  }
  __device__ void wait_ge(int64_t off, uint64_t v) const {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> x(*(uint64_t *)at(me, off));
    while (x.load(cuda::memory_order_acquire) < v) {
    }
  }
  __device__ uint8_t *mine(int64_t off) const { return at(me, off); }
};
#endif

// What every kernel of a point gets.
struct MoeArgs {
  MoeLayout L;
  int me;
  uint8_t *local;         // this PE's local buffer (S.scratch)
  const uint8_t *tokens;  // this PE's tokens (S.src)
};

template <typename X>
__device__ static inline const X *moe_tab(const MoeArgs &m, int64_t off) { return (const X *)(m.local + off); }
__device__ static inline int32_t moe_route(const MoeArgs &m, int r, int t, int k) { return moe_tab<int32_t>(m, m.L.o_route)[((int64_t)r * m.L.t + t) * m.L.k + k]; }
__device__ static inline float moe_weight(const MoeArgs &m, int r, int t, int k) { return moe_tab<float>(m, m.L.o_w)[((int64_t)r * m.L.t + t) * m.L.k + k]; }
__device__ static inline int64_t moe_cnt(const MoeArgs &m, int r, int e) { return moe_tab<int64_t>(m, m.L.o_cnt)[(int64_t)r * m.L.e + e]; }
__device__ static inline int64_t moe_roff(const MoeArgs &m, int d, int l, int src) {
  return moe_tab<int64_t>(m, m.L.o_roff)[((int64_t)d * m.L.el + l) * m.L.n + src];
}
__device__ static inline int64_t moe_aoff(const MoeArgs &m, int d, int src) { return moe_tab<int64_t>(m, m.L.o_aoff)[d * m.L.n + src]; }
__device__ static inline int64_t moe_pairs(const MoeArgs &m, int src, int d) { return moe_tab<int64_t>(m, m.L.o_pairs)[src * m.L.n + d]; }
// Messages src sends to dest's experts in one combine: its slots there (ll)
// or its arrivals there (normal).
__device__ static inline int64_t moe_back(const MoeArgs &m, int src, int d) {
  if (m.L.mode == MOE_NORMAL) return moe_pairs(m, src, d);
  int64_t c = 0;
  for (int l = 0; l < m.L.el; l++) c += moe_cnt(m, src, d * m.L.el + l);
  return c;
}

// Each CTA's operation count (the epoch of counters and signals: they grow
// by a fixed amount every operation), kept in device memory so a graph's
// replay or the next launch continues it.
__device__ static inline uint64_t moe_epoch(const MoeArgs &m) {
  __shared__ uint64_t e;
  if (threadIdx.x == 0) e = ((uint64_t *)(m.local + m.L.o_epoch))[blockIdx.x];
  __syncthreads();
  return e;
}
__device__ static inline void moe_epoch_end(const MoeArgs &m, uint64_t ep) {
  __syncthreads();
  if (threadIdx.x == 0) ((uint64_t *)(m.local + m.L.o_epoch))[blockIdx.x] = ep + 1;
}

// Signal values: the operation (epoch + 1) above 32 bits, the count below.
__host__ __device__ static inline uint64_t moe_sigval(uint64_t epoch, int64_t count) { return ((epoch + 1) << 32) | (uint64_t)count; }

// moe_sent: a warp finished a message to (dest, done word w) of c in this
// operation; the last one publishes the count with a signal at off.
template <class T>
__device__ static inline void moe_sent(const T &tr, const MoeArgs &m, uint64_t ep, int d, int64_t w, int64_t c, int64_t off) {
  tr.complete();
  __syncwarp();
  if (threadIdx.x % 32 == 0) {
    uint64_t n = atomicAdd((unsigned long long *)(m.local + m.L.o_done) + w, 1ull) + 1;
    if (n == (ep + 1) * (uint64_t)c) {
      __threadfence_system();
      tr.signal(d, off, moe_sigval(ep, c));
    }
  }
}

// moe_fanout copies arrived message j (its payload at pay, its header h)
// into the slot of each of its local experts, the slot from a local counter
// of (expert, source).
__device__ static inline void moe_fanout(const MoeArgs &m, uint64_t ep, const MoeMetaN *h, const uint8_t *pay, uint8_t *slots, uint8_t *smeta) {
  int lane = threadIdx.x % 32;
  uint64_t *fan = (uint64_t *)(m.local + m.L.o_done) + moe_d_fan(m.L);
  for (int q = 0; q < h->n; q++) {
    int k = h->k[q], e = moe_route(m, h->src, h->token, k), l = e % m.L.el;
    uint64_t slot = 0;
    if (lane == 0) slot = atomicAdd((unsigned long long *)&fan[(int64_t)l * m.L.n + h->src], 1ull) - ep * (uint64_t)moe_cnt(m, h->src, e);
    slot = __shfl_sync(0xffffffffu, slot, 0);
    int64_t at = moe_roff(m, m.me, l, h->src) + (int64_t)slot;
    group_copy(slots + at * m.L.sz, pay, m.L.tok, lane, 32);
    if (lane == 0) {
      MoeMeta mm = {h->src, h->token, e, k};
      *(MoeMeta *)(smeta + at * 16) = mm;
    }
  }
}

// --- Dispatch, device-initiated (NVSHMEM, LSA).
template <class T, int MODE>
__global__ void k_moe_dispatch(T tr, MoeArgs m, int64_t *st) {
  stamp_begin(st);
  const MoeLayout &L = m.L;
  uint64_t ep = moe_epoch(m);
  int lane = threadIdx.x % 32;
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32, warps = (int64_t)gridDim.x * blockDim.x / 32;
  int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, nthreads = (int64_t)gridDim.x * blockDim.x;
  const uint8_t *lists = m.local + L.o_list;
  if constexpr (MODE == MOE_LL) {
    // A message per selection s: the slot from the destination's counter of
    // (expert, this source); its payload and header; the count at the end.
    for (int64_t s = warp; s < (int64_t)L.t * L.k; s += warps) {
      int tk = (int)(s / L.k), k = (int)(s % L.k);
      int e = moe_route(m, m.me, tk, k), d = e / L.el, l = e % L.el;
      int64_t c = moe_cnt(m, m.me, e);
      uint64_t slot = 0;
      if (lane == 0) slot = tr.fetch_add(d, L.o_ctr + 8 * ((int64_t)l * L.n + m.me), 1) - ep * (uint64_t)c;
      slot = __shfl_sync(0xffffffffu, slot, 0);
      int64_t at = moe_roff(m, d, l, m.me) + (int64_t)slot;
      tr.put_warp(d, L.o_slot + at * L.sz, m.tokens + (int64_t)tk * L.tok, L.tok);
      tr.put_warp(d, L.o_smeta + at * 16, lists + s * 16, 16);  // the header, staged by moe_prepare
      moe_sent(tr, m, ep, d, (int64_t)d * L.el + l, c, L.o_sig + 8 * ((int64_t)l * L.n + m.me));
    }
    for (int64_t i = tid; i < L.e; i += nthreads)  // (destination, expert) without a message: a count of zero
      if (moe_cnt(m, m.me, (int)i) == 0) tr.signal((int)(i / L.el), L.o_sig + 8 * ((i % L.el) * L.n + m.me), moe_sigval(ep, 0));
    if (blockIdx.x == 0)  // the receiver: every (expert, source) count of this operation
      for (int64_t i = threadIdx.x; i < (int64_t)L.el * L.n; i += blockDim.x) tr.wait_ge(L.o_sig + 8 * i, moe_sigval(ep, 0));
  } else if constexpr (MODE == MOE_NORMAL) {
    // A message per (token, destination): the payload once, the header with
    // the token's selections there; fanned out on arrival.
    for (int64_t p = warp; p < (int64_t)L.t * L.n; p += warps) {
      const MoeMetaN *h = (const MoeMetaN *)(lists + p * 32);
      if (h->n == 0) continue;
      int tk = (int)(p / L.n), d = (int)(p % L.n);
      int64_t c = moe_pairs(m, m.me, d);
      uint64_t slot = 0;
      if (lane == 0) slot = tr.fetch_add(d, L.o_ctr + 8 * ((int64_t)L.el * L.n + m.me), 1) - ep * (uint64_t)c;
      slot = __shfl_sync(0xffffffffu, slot, 0);
      int64_t at = moe_aoff(m, d, m.me) + (int64_t)slot;
      tr.put_warp(d, L.o_arr + at * L.sz, m.tokens + (int64_t)tk * L.tok, L.tok);
      tr.put_warp(d, L.o_ameta + at * 32, h, 32);
      moe_sent(tr, m, ep, d, moe_d_norm(L) + d, c, L.o_sig + 8 * ((int64_t)L.el * L.n + m.me));
    }
    for (int64_t d = tid; d < L.n; d += nthreads)
      if (moe_pairs(m, m.me, (int)d) == 0) tr.signal((int)d, L.o_sig + 8 * ((int64_t)L.el * L.n + m.me), moe_sigval(ep, 0));
    // Every CTA waits for every source's count, then fans the arrivals out.
    for (int src = threadIdx.x; src < L.n; src += blockDim.x) tr.wait_ge(L.o_sig + 8 * ((int64_t)L.el * L.n + src), moe_sigval(ep, 0));
    __syncthreads();
    int64_t arrived = 0;
    for (int src = 0; src < L.n; src++) arrived += moe_pairs(m, src, m.me);
    for (int64_t j = warp; j < arrived; j += warps)
      moe_fanout(m, ep, (const MoeMetaN *)tr.mine(L.o_ameta + j * 32), tr.mine(L.o_arr + j * L.sz), tr.mine(L.o_slot), tr.mine(L.o_smeta));
  } else {
    static_assert(unhandled<MODE>, "a MoE mode without a branch");
  }
  moe_epoch_end(m, ep);
  stamp_end0(st);
}

// moe_reduce: the token's rank sums what every rank sent back (ll: the K
// expert outputs with their weights; normal: each destination's partial
// sum) into the output, in fp32, written bf16.
__device__ static inline void moe_reduce(const MoeArgs &m, const uint8_t *comb, const int64_t *pos) {
  const MoeLayout &L = m.L;
  __nv_bfloat16 *out = (__nv_bfloat16 *)(m.local + L.o_outp);
  int64_t h2 = L.out / 2;
  for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < (int64_t)L.t * h2; x += (int64_t)gridDim.x * blockDim.x) {
    int tk = (int)(x / h2);
    int64_t i = x % h2;
    float acc = 0;
    if (L.mode == MOE_LL) {
      for (int k = 0; k < L.k; k++) {
        int64_t at = pos ? pos[(int64_t)tk * L.k + k] : (int64_t)tk * L.k + k;
        acc += moe_weight(m, m.me, tk, k) * __bfloat162float(((const __nv_bfloat16 *)(comb + at * L.out))[i]);
      }
    } else {
      uint64_t seen = 0;
      for (int k = 0; k < L.k; k++) {
        int d = moe_route(m, m.me, tk, k) / L.el;
        if (seen >> d & 1) continue;
        seen |= 1ull << d;
        int64_t at = pos ? pos[(int64_t)tk * L.n + d] : (int64_t)tk * L.n + d;
        acc += __bfloat162float(((const __nv_bfloat16 *)(comb + at * L.out))[i]);
      }
    }
    out[x] = __float2bfloat16(acc);
  }
}

// moe_partial: normal mode's destination sums a (source, token)'s local
// expert outputs (its slots, listed after the header) with their weights,
// into stage (bf16); one warp, eight values a lane at a time (16-byte loads:
// a warp per arrival has few warps to hide its loads behind).
__device__ static inline void moe_partial(const MoeArgs &m, const MoeMetaN *h, const uint8_t *slots, uint8_t *stage) {
  const int32_t *at = (const int32_t *)(h + 1);
  float w[8];
  for (int q = 0; q < h->n; q++) w[q] = moe_weight(m, h->src, h->token, h->k[q]);
  int64_t n8 = m.L.sz % 16 == 0 && m.L.out % 16 == 0 ? m.L.out / 16 : 0;  // 8 bf16 a vector, where aligned
  for (int64_t v = threadIdx.x % 32; v < n8; v += 32) {
    float acc[8] = {};
    for (int q = 0; q < h->n; q++) {
      uint4 x = ((const uint4 *)(slots + (int64_t)at[q] * m.L.sz))[v];
      const __nv_bfloat16 *b = (const __nv_bfloat16 *)&x;
#pragma unroll
      for (int u = 0; u < 8; u++) acc[u] += w[q] * __bfloat162float(b[u]);
    }
    uint4 y;
    __nv_bfloat16 *o = (__nv_bfloat16 *)&y;
#pragma unroll
    for (int u = 0; u < 8; u++) o[u] = __float2bfloat16(acc[u]);
    ((uint4 *)stage)[v] = y;
  }
  for (int64_t i = n8 * 8 + threadIdx.x % 32; i < m.L.out / 2; i += 32) {  // a tail when hidden is not a multiple of 8
    float acc = 0;
    for (int q = 0; q < h->n; q++) acc += w[q] * __bfloat162float(((const __nv_bfloat16 *)(slots + (int64_t)at[q] * m.L.sz))[i]);
    ((__nv_bfloat16 *)stage)[i] = __float2bfloat16(acc);
  }
  __syncwarp();
}

// --- Combine, device-initiated.
template <class T, int MODE>
__global__ void k_moe_combine(T tr, MoeArgs m, int64_t *st) {
  stamp_begin(st);
  const MoeLayout &L = m.L;
  uint64_t ep = moe_epoch(m);
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32, warps = (int64_t)gridDim.x * blockDim.x / 32;
  int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, nthreads = (int64_t)gridDim.x * blockDim.x;
  int64_t msgs = 0;  // this rank's slots (ll) or arrived pairs (normal)
  for (int src = 0; src < L.n; src++) msgs += MODE == MOE_LL ? moe_back(m, src, m.me) : moe_pairs(m, src, m.me);
  for (int64_t j = warp; j < msgs; j += warps) {
    int src, tk, at;
    const uint8_t *payload;
    if constexpr (MODE == MOE_LL) {
      const MoeMeta *h = (const MoeMeta *)tr.mine(L.o_smeta + j * 16);
      src = h->src, tk = h->token, at = tk * L.k + h->k;
      payload = tr.mine(L.o_slot + j * L.sz);  // the expert's output, where its input was
    } else if constexpr (MODE == MOE_NORMAL) {
      const MoeMetaN *h = (const MoeMetaN *)(m.local + L.o_list + j * 64);
      src = h->src, tk = h->token, at = tk * L.n + m.me;
      uint8_t *stage = tr.mine(L.o_arr + j * L.sz);
      moe_partial(m, h, tr.mine(L.o_slot), stage);
      payload = stage;
    } else {
      static_assert(unhandled<MODE>, "a MoE mode without a branch");
    }
    tr.put_warp(src, L.o_comb + (int64_t)at * L.out, payload, L.out);
    moe_sent(tr, m, ep, src, moe_d_comb(L) + src, moe_back(m, src, m.me), L.o_csig + 8 * m.me);
  }
  for (int64_t d = tid; d < L.n; d += nthreads)
    if (moe_back(m, (int)d, m.me) == 0) tr.signal((int)d, L.o_csig + 8 * m.me, moe_sigval(ep, 0));
  for (int d = threadIdx.x; d < L.n; d += blockDim.x) tr.wait_ge(L.o_csig + 8 * d, moe_sigval(ep, 0));
  __syncthreads();
  moe_reduce(m, tr.mine(L.o_comb), nullptr);
  moe_epoch_end(m, ep);
  stamp_end0(st);
}

// --- NCCL from the host: table-driven gathers and scatters around one
// group of sends and receives. A table row is {from, to} in messages: copy
// bytes from src + from x sstride to dst + to x dstride (one warp a row).
__global__ void k_moe_move(uint8_t *dst, int64_t dstride, const uint8_t *src, int64_t sstride, const int64_t *rows, int64_t n, int64_t bytes) {
  int lane = threadIdx.x % 32;
  for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += (int64_t)gridDim.x * blockDim.x / 32)
    group_copy(dst + rows[2 * r + 1] * dstride, src + rows[2 * r] * sstride, bytes, lane, 32);
}

// Normal mode's arrivals received through NCCL, fanned out as the device
// implementations do (moe_fanout).
__global__ void k_moe_fan(MoeArgs m, const uint8_t *pay, const uint8_t *hdr, uint8_t *slots, uint8_t *smeta, int64_t n) {
  uint64_t ep = moe_epoch(m);
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32)
    moe_fanout(m, ep, (const MoeMetaN *)(hdr + j * 32), pay + j * m.L.tok, slots, smeta);
  moe_epoch_end(m, ep);
}

// Normal combine's partial sums, staged in arrival order (one warp each).
__global__ void k_moe_partials(MoeArgs m, const uint8_t *slots, uint8_t *stage, int64_t n) {
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32)
    moe_partial(m, (const MoeMetaN *)(m.local + m.L.o_list + j * 64), slots, stage + j * m.L.out);
}

__global__ void k_moe_reduce(MoeArgs m, const uint8_t *comb, const int64_t *pos) { moe_reduce(m, comb, pos); }

// ---------------------------------------------------------------------------
// Host side.

static MoeLayout g_ml;  // the point in progress

static int moe_lsa(const Args *a) { return a->impl == NB_IMPL_LSA_ONESHOT; }
static int moe_host_nccl(const Args *a) { return a->impl == NB_IMPL_NCCL; }

// The buffer every peer reaches (NVSHMEM's symmetric destination, or NCCL's
// window); NCCL from the host lays the same slots out in S.dst.
static uint8_t *moe_remote(const Args *a) {
#if NB_NCCL_DEVICE
  if (moe_lsa(a)) return (uint8_t *)g_nd.dst;
#endif
  (void)a;
  return S.dst;
}

static MoeArgs moe_args(void) {
  MoeArgs m;
  m.L = g_ml, m.me = S.me, m.local = S.scratch, m.tokens = S.src;
  return m;
}

// A host table uploaded to the local buffer at off.
static int moe_put(int64_t off, const void *h, int64_t bytes) {
  if (bytes > 0) CK(cudaMemcpyAsync(S.scratch + off, h, bytes, cudaMemcpyHostToDevice, S.stream));
  CK(cudaStreamSynchronize(S.stream));  // the host copy may be freed after
  return 0;
}

// The NCCL-from-the-host plan of this PE: the tables and the sizes of each
// peer's sections (in messages), for the dispatch or the combine step.
struct MoeNccl {
  int64_t scnt[64], soff[64], rcnt[64], roff[64];  // per peer: messages sent/received and where their section starts
  int64_t nsend, nrecv;
  int64_t o_pack, o_hpack, o_unpack, o_hunpack, o_pos;  // table offsets in the local buffer (o_tab)
  int64_t o_hsend, o_hrecv, o_csend, o_crecv;           // header sections and the counts, after the payloads
};
static MoeNccl g_mn;

// moe_prepare_nccl builds the host implementation's tables (local).
static int moe_prepare_nccl(const Args *a, int combine) {
  const MoeLayout &L = g_ml;
  int n = L.n, me = S.me, el = L.el;
  memset(&g_mn, 0, sizeof g_mn);
  int64_t rows = (int64_t)L.t * L.k + (int64_t)L.t * n + L.max_slots + L.max_arr;
  int64_t *pack = (int64_t *)malloc(16 * rows), *hpack = (int64_t *)malloc(16 * rows), *unpack = (int64_t *)malloc(16 * rows),
          *hunpack = (int64_t *)malloc(16 * rows), *pos = (int64_t *)malloc(8 * ((int64_t)L.t * (L.k > n ? L.k : n)));
  if (!pack || !hpack || !unpack || !hunpack || !pos) {
    free(pack), free(hpack), free(unpack), free(hunpack), free(pos);
    return fail(NB_ERR, "MoE: no host memory for NCCL's tables");
  }
  int64_t np = 0, nh = 0, nu = 0, nhu = 0;
  if (!combine) {
    // Send: per destination, ll: by expert then token (each selection);
    // normal: by token (each token with an expert there).
    for (int d = 0; d < n; d++) {
      g_mn.soff[d] = g_mn.nsend;
      if (L.mode == MOE_LL) {
        for (int l = 0; l < el; l++)
          for (int tk = 0; tk < L.t; tk++)
            for (int k = 0; k < L.k; k++)
              if (moe_hroute(L, me, tk)[k] == d * el + l) {
                pack[2 * np] = tk, pack[2 * np + 1] = g_mn.nsend, np++;
                hpack[2 * nh] = (int64_t)tk * L.k + k, hpack[2 * nh + 1] = g_mn.nsend, nh++;
                g_mn.nsend++;
              }
      } else {
        for (int tk = 0; tk < L.t; tk++) {
          int on = 0;
          for (int k = 0; k < L.k; k++) on |= moe_hroute(L, me, tk)[k] / el == d;
          if (!on) continue;
          pack[2 * np] = tk, pack[2 * np + 1] = g_mn.nsend, np++;
          hpack[2 * nh] = (int64_t)tk * n + d, hpack[2 * nh + 1] = g_mn.nsend, nh++;
          g_mn.nsend++;
        }
      }
      g_mn.scnt[d] = g_mn.nsend - g_mn.soff[d];
    }
    // Receive: per source, in the order it sent; ll unpacks into the slot
    // of (expert, source) in token order (the combine's layout too).
    for (int src = 0; src < n; src++) {
      g_mn.roff[src] = g_mn.nrecv;
      if (L.mode == MOE_LL) {
        for (int l = 0; l < el; l++) {
          int64_t c = moe_hcnt(L, src, me * el + l);
          for (int64_t j = 0; j < c; j++) {
            unpack[2 * nu] = g_mn.nrecv, unpack[2 * nu + 1] = moe_hroff(L, me, l, src) + j, nu++;
            hunpack[2 * nhu] = g_mn.nrecv, hunpack[2 * nhu + 1] = moe_hroff(L, me, l, src) + j, nhu++;
            g_mn.nrecv++;
          }
        }
      } else {
        g_mn.nrecv += moe_hpairs(L, src, me);  // fanned out on the device (moe_fanout)
      }
      g_mn.rcnt[src] = g_mn.nrecv - g_mn.roff[src];
    }
  } else {
    // Combine: this rank sends each source its expert outputs (ll: its slots
    // of that source, by expert then token; normal: one partial per
    // arrival, in arrival order); the token's rank receives per rank and
    // sums at the positions pos.
    for (int src = 0; src < n; src++) {
      g_mn.soff[src] = g_mn.nsend;
      if (L.mode == MOE_LL) {
        for (int l = 0; l < el; l++)
          for (int64_t j = 0; j < moe_hcnt(L, src, me * el + l); j++) {
            pack[2 * np] = moe_hroff(L, me, l, src) + j, pack[2 * np + 1] = g_mn.nsend, np++;
            g_mn.nsend++;
          }
      } else {
        g_mn.nsend += moe_hpairs(L, src, me);
      }
      g_mn.scnt[src] = g_mn.nsend - g_mn.soff[src];
    }
    for (int d = 0; d < n; d++) {
      g_mn.roff[d] = g_mn.nrecv;
      if (L.mode == MOE_LL) {
        for (int l = 0; l < el; l++)
          for (int tk = 0; tk < L.t; tk++)
            for (int k = 0; k < L.k; k++)
              if (moe_hroute(L, me, tk)[k] == d * el + l) pos[(int64_t)tk * L.k + k] = g_mn.nrecv++;
      } else {
        for (int tk = 0; tk < L.t; tk++) {
          int on = 0;
          for (int k = 0; k < L.k; k++) on |= moe_hroute(L, me, tk)[k] / el == d;
          if (on) pos[(int64_t)tk * n + d] = g_mn.nrecv++;
        }
      }
      g_mn.rcnt[d] = g_mn.nrecv - g_mn.roff[d];
    }
  }
  int64_t o = L.o_tab;
  g_mn.o_pack = o, o += 16 * np;
  g_mn.o_hpack = o, o += 16 * nh;
  g_mn.o_unpack = o, o += 16 * nu;
  g_mn.o_hunpack = o, o += 16 * nhu;
  g_mn.o_pos = o;
  int64_t npos = (int64_t)L.t * (L.mode == MOE_LL ? L.k : n);
  int rc = moe_put(g_mn.o_pack, pack, 16 * np);
  if (!rc) rc = moe_put(g_mn.o_hpack, hpack, 16 * nh);
  if (!rc) rc = moe_put(g_mn.o_unpack, unpack, 16 * nu);
  if (!rc) rc = moe_put(g_mn.o_hunpack, hunpack, 16 * nhu);
  if (!rc && combine) rc = moe_put(g_mn.o_pos, pos, 8 * npos);
  free(pack), free(hpack), free(unpack), free(hunpack), free(pos);
  // Header and count sections follow the payloads in the staging buffers.
  g_mn.o_hsend = L.o_send + align256(g_mn.nsend * L.sz);
  g_mn.o_hrecv = L.o_recv + align256(g_mn.nrecv * L.sz);
  g_mn.o_csend = g_mn.o_hsend + align256(g_mn.nsend * 32);
  g_mn.o_crecv = g_mn.o_hrecv + align256(g_mn.nrecv * 32);
  if (g_mn.o_crecv + 8 * 64 > L.local || 16 * (np + nh + nu + nhu) + (combine ? 8 * npos : 0) > L.o_seen - L.o_tab)
    return fail(NB_ERR, "MoE: NCCL's staging does not fit its layout (a bug)");
  // The counts this rank sends each peer (what the receiver learns first).
  if (!rc) rc = moe_put(g_mn.o_csend, g_mn.scnt, 8 * n);
  return rc;
}

__global__ void k_moe_fill_slots(uint8_t *slots, uint8_t *smeta, const MoeMeta *hdr, int64_t n, int64_t sz, int64_t out) {
  for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < n * (out / 2); x += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = x / (out / 2), i = x % (out / 2);
    MoeMeta h = hdr[j];
    ((__nv_bfloat16 *)(slots + j * sz))[i] = __float2bfloat16(moe_f(h.src, h.token, h.expert, i));
    if (i == 0) ((MoeMeta *)smeta)[j] = h;
  }
}

// moe_prepare (local): the routing, the tables, the tokens, the headers, the
// counters at zero, and for a combine the expert outputs in their slots.
static int moe_prepare(Run *r) {
  const Args *a = r->a;
  MoeLayout &L = g_ml;
  int rc;
  if ((rc = moe_plan(a, &L))) return rc;
  int n = L.n, me = S.me, el = L.el;
  if (L.remote > S.buf || L.local > S.buf || (int64_t)L.t * L.tok > S.buf)
    return fail(NB_ERR, "MoE: this routing needs %lld bytes of receive buffer and %lld of tables per PE, the heap holds %lld per buffer",
                (long long)L.remote, (long long)L.local, (long long)S.buf);
  int64_t ntk = (int64_t)n * L.t * L.k;
  if ((rc = moe_put(L.o_route, g_moe.route, 4 * ntk)) || (rc = moe_put(L.o_w, g_moe.w, 4 * ntk)) ||
      (rc = moe_put(L.o_cnt, g_moe.cnt, 8 * (int64_t)n * L.e)) || (rc = moe_put(L.o_roff, g_moe.roff, 8 * (int64_t)n * el * n)) ||
      (rc = moe_put(L.o_aoff, g_moe.aoff, 8 * (int64_t)n * n)) || (rc = moe_put(L.o_pairs, g_moe.pairs, 8 * (int64_t)n * n)))
    return rc;
  CK(cudaMemsetAsync(S.scratch + L.o_done, 0, L.o_route - L.o_done, S.stream));  // done words and epochs
  int combine = a->op == NB_OP_MOE_COMBINE;
  uint8_t *list = (uint8_t *)calloc(1, 64 * ((int64_t)L.t * L.k + (int64_t)L.t * n + L.max_slots + L.max_arr));
  MoeMeta *slots = (MoeMeta *)calloc(L.max_slots + 1, sizeof(MoeMeta));
  if (!list || !slots) {
    free(list), free(slots);
    return fail(NB_ERR, "MoE: no host memory for the headers");
  }
  int64_t nlist = 0;
  if (!combine) {
    // The tokens (this PE's pattern) and each message's header.
    k_fill<<<1024, 256, 0, S.stream>>>(S.src, (int64_t)L.t * L.tok, me, a->seed);
    for (int tk = 0; tk < L.t; tk++) {
      const int32_t *ex = moe_hroute(L, me, tk);
      if (L.mode == MOE_LL) {
        for (int k = 0; k < L.k; k++) {
          MoeMeta h = {me, tk, ex[k], k};
          memcpy(list + ((int64_t)tk * L.k + k) * 16, &h, 16);
        }
        nlist = (int64_t)L.t * L.k * 16;
      } else {
        for (int d = 0; d < n; d++) {
          MoeMetaN h;
          memset(&h, 0, sizeof h);
          h.src = me, h.token = tk;
          for (int k = 0; k < L.k; k++)
            if (ex[k] / el == d) h.k[h.n++] = (int16_t)k;
          memcpy(list + ((int64_t)tk * n + d) * 32, &h, 32);
        }
        nlist = (int64_t)L.t * n * 32;
      }
    }
  } else {
    // The slots of this PE's experts in the order NCCL's unpack gives them
    // (by expert, source, then token), each holding its expert's output.
    for (int l = 0; l < el; l++)
      for (int src = 0; src < n; src++) {
        int64_t j = moe_hroff(L, me, l, src);
        for (int tk = 0; tk < L.t; tk++)
          for (int k = 0; k < L.k; k++)
            if (moe_hroute(L, src, tk)[k] == me * el + l) slots[j++] = MoeMeta{src, tk, me * el + l, k};
      }
    int64_t ns = 0;
    for (int l = 0; l < el; l++)
      for (int src = 0; src < n; src++) ns += moe_hcnt(L, src, me * el + l);
    if (L.mode == MOE_NORMAL) {
      // The arrivals (by source, then token) with the slots of their local experts.
      int64_t j = 0;
      for (int src = 0; src < n; src++)
        for (int tk = 0; tk < L.t; tk++) {
          MoeMetaN h;
          memset(&h, 0, sizeof h);
          h.src = src, h.token = tk;
          int32_t at[8];
          const int32_t *ex = moe_hroute(L, src, tk);
          for (int k = 0; k < L.k; k++) {
            if (ex[k] / el != me) continue;
            int l = ex[k] % el;
            int64_t rank = 0;  // tokens of src before tk with this expert
            for (int t2 = 0; t2 < tk; t2++)
              for (int k2 = 0; k2 < L.k; k2++) rank += moe_hroute(L, src, t2)[k2] == ex[k];
            at[h.n] = (int32_t)(moe_hroff(L, me, l, src) + rank);
            h.k[h.n++] = (int16_t)k;
          }
          if (!h.n) continue;
          memcpy(list + j * 64, &h, 32);
          memcpy(list + j * 64 + 32, at, sizeof at);
          j++;
        }
      nlist = j * 64;
    }
    uint8_t *rem = moe_remote(a);
    MoeMeta *dh = (MoeMeta *)(S.scratch + L.o_tab);  // staged: the fill kernel reads the headers from here
    if ((rc = moe_put(L.o_tab, slots, 16 * ns))) {
      free(list), free(slots);
      return rc;
    }
    if (!moe_lsa(a) && ns > 0) {  // LSA fills its window in setup (made there)
      k_moe_fill_slots<<<1024, 256, 0, S.stream>>>(rem + L.o_slot, rem + L.o_smeta, dh, ns, L.sz, L.out);
      CKLAUNCH("MoE slot fill");
    }
    if (a->verify) CK(cudaMemsetAsync(S.scratch + L.o_outp, 0xA5, (int64_t)L.t * L.out, S.stream));
  }
  rc = moe_put(L.o_list, list, nlist);
  free(list), free(slots);
  if (rc) return rc;
  if (!moe_lsa(a)) {
    CK(cudaMemsetAsync(S.dst, 0, L.o_slot, S.stream));  // counters and signals
    if (!combine && a->verify) CK(cudaMemsetAsync(S.dst + L.o_slot, 0xA5, L.o_arr - L.o_slot, S.stream));  // poisoned slots and headers
  }
  if (moe_host_nccl(a)) return moe_prepare_nccl(a, combine);
  return 0;
}

// moe_setup (collective): NCCL's communicator or its device objects, and
// for LSA the window's counters, slots and headers.
static int moe_setup(Run *r) {
  const Args *a = r->a;
  if (moe_host_nccl(a)) return nccl_setup(r);
  if (!moe_lsa(a)) return 0;
#if NB_NCCL_DEVICE
  int st = nd_ready(0);
  if (st) return st;
  const MoeLayout &L = g_ml;
  if (g_nd.dc.lsaSize != S.npes) return fail(NB_UNREACHABLE, "the LSA team has %d of the %d ranks: the LSA dispatch needs load/store access to every rank", g_nd.dc.lsaSize, S.npes);
  if (L.remote > S.buf) return fail(NB_ERR, "MoE: the window holds %lld bytes, the routing needs %lld", (long long)S.buf, (long long)L.remote);
  uint8_t *w = (uint8_t *)g_nd.dst;
  CK(cudaMemsetAsync(w, 0, L.o_slot, S.stream));
  if (r->a->op == NB_OP_MOE_COMBINE) {
    int64_t ns = 0;
    for (int l = 0; l < L.el; l++)
      for (int src = 0; src < L.n; src++) ns += moe_hcnt(L, src, S.me * L.el + l);
    if (ns > 0) {
      k_moe_fill_slots<<<1024, 256, 0, S.stream>>>(w + L.o_slot, w + L.o_smeta, (const MoeMeta *)(S.scratch + L.o_tab), ns, L.sz, L.out);
      CKLAUNCH("MoE slot fill");
    }
  } else if (a->verify) {
    CK(cudaMemsetAsync(w + L.o_slot, 0xA5, L.o_arr - L.o_slot, S.stream));
  }
  CK(cudaStreamSynchronize(S.stream));
  return 0;
#else
  return nd_missing();
#endif
}

static int moe_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = 1;  // every PE runs; PE 0's samples are reported
  r->target = -1;
  if (a->impl != NB_IMPL_NVSHMEM_DEVICE && a->impl != NB_IMPL_LSA_ONESHOT && a->impl != NB_IMPL_NCCL)
    return fail(NB_ERR, "MoE: unknown implementation %d", a->impl);
  if (a->ctas <= 0 || a->ctas > NB_MAX_CTAS || a->threads < 32 || a->threads > 1024 || a->threads % 32)
    return fail(NB_ERR, "MoE: launch %d x %d invalid", a->ctas, a->threads);
  if (moe_lsa(a)) {
    if (int st = nd_headers()) return st;
    if (int st = nd_state()) return st;
  }
  if (moe_host_nccl(a) && !g_nccl.h) return fail(NB_UNREACHABLE, "%s", g_nccl.why);
  MoeLayout L;
  return moe_plan(a, &L);
}

static int moe_active(Run *) { return 1; }
static int moe_synced(Run *) { return 1; }

// NCCL from the host: one group of sends and receives of each peer's section.
static int moe_exchange(ncclComm_t c, const uint8_t *send, uint8_t *recv, int64_t bytes) {
  if (g_nccl.groupStart() != ncclSuccess) return fail(NB_ERR, "ncclGroupStart");
  ncclResult_t nr = ncclSuccess;
  for (int q = 0; q < S.npes && nr == ncclSuccess; q++) {
    if (g_mn.scnt[q] > 0) nr = g_nccl.send(send + g_mn.soff[q] * bytes, g_mn.scnt[q] * bytes, ncclUint8, q, c, S.stream);
    if (nr == ncclSuccess && g_mn.rcnt[q] > 0) nr = g_nccl.recv(recv + g_mn.roff[q] * bytes, g_mn.rcnt[q] * bytes, ncclUint8, q, c, S.stream);
  }
  ncclResult_t e = g_nccl.groupEnd();
  if (nr != ncclSuccess || e != ncclSuccess) return fail(NB_ERR, "NCCL send/recv: %s", g_nccl.errorString(nr != ncclSuccess ? nr : e));
  return 0;
}

// The counts a framework exchanges before the data (each receiver's
// sizes): one int64 to every peer, in one group.
static int moe_exchange_counts(ncclComm_t c) {
  const int64_t *send = (const int64_t *)(S.scratch + g_mn.o_csend);
  int64_t *recv = (int64_t *)(S.scratch + g_mn.o_crecv);
  if (g_nccl.groupStart() != ncclSuccess) return fail(NB_ERR, "ncclGroupStart");
  ncclResult_t nr = ncclSuccess;
  for (int q = 0; q < S.npes && nr == ncclSuccess; q++) {
    nr = g_nccl.send(send + q, 8, ncclUint8, q, c, S.stream);
    if (nr == ncclSuccess) nr = g_nccl.recv(recv + q, 8, ncclUint8, q, c, S.stream);
  }
  ncclResult_t e = g_nccl.groupEnd();
  if (nr != ncclSuccess || e != ncclSuccess) return fail(NB_ERR, "NCCL counts: %s", g_nccl.errorString(nr != ncclSuccess ? nr : e));
  return 0;
}

// One operation of NCCL from the host: pack, the counts, the data, unpack.
static int moe_nccl_once(Run *r) {
  const Args *a = r->a;
  const MoeLayout &L = g_ml;
  MoeArgs m = moe_args();
  uint8_t *loc = S.scratch;
  char key[64];
  comm_key(a, key, sizeof key);
  CommEntry *ce = comm_find(key);
  if (!ce || ce->failed[0]) return fail(NB_ERR, "no NCCL communicator %s", key);
  int combine = a->op == NB_OP_MOE_COMBINE;
  int64_t bytes = combine ? L.out : L.tok, hbytes = L.mode == MOE_LL ? 16 : 32;
  const int64_t *tab = (const int64_t *)loc;
  if (!combine) {
    k_moe_move<<<1024, 256, 0, S.stream>>>(loc + L.o_send, L.tok, S.src, L.tok, tab + g_mn.o_pack / 8, g_mn.nsend, L.tok);
    k_moe_move<<<256, 256, 0, S.stream>>>(loc + g_mn.o_hsend, hbytes, loc + L.o_list, hbytes, tab + g_mn.o_hpack / 8, g_mn.nsend, hbytes);
  } else if (L.mode == MOE_LL) {
    k_moe_move<<<1024, 256, 0, S.stream>>>(loc + L.o_send, L.out, S.dst + L.o_slot, L.sz, tab + g_mn.o_pack / 8, g_mn.nsend, L.out);
  } else {
    k_moe_partials<<<1024, 256, 0, S.stream>>>(m, S.dst + L.o_slot, loc + L.o_send, g_mn.nsend);
  }
  CKLAUNCH("MoE pack");
  if (int rc = moe_exchange_counts(ce->comm)) return rc;
  if (int rc = moe_exchange(ce->comm, loc + L.o_send, loc + L.o_recv, bytes)) return rc;
  if (!combine) {
    if (int rc = moe_exchange(ce->comm, loc + g_mn.o_hsend, loc + g_mn.o_hrecv, hbytes)) return rc;
    if (L.mode == MOE_LL) {
      k_moe_move<<<1024, 256, 0, S.stream>>>(S.dst + L.o_slot, L.sz, loc + L.o_recv, L.tok, tab + g_mn.o_unpack / 8, g_mn.nrecv, L.tok);
      k_moe_move<<<256, 256, 0, S.stream>>>(S.dst + L.o_smeta, 16, loc + g_mn.o_hrecv, 16, tab + g_mn.o_hunpack / 8, g_mn.nrecv, 16);
    } else {
      k_moe_fan<<<a->ctas, a->threads, 0, S.stream>>>(m, loc + L.o_recv, loc + g_mn.o_hrecv, S.dst + L.o_slot, S.dst + L.o_smeta, g_mn.nrecv);
    }
  } else {
    k_moe_reduce<<<1024, 256, 0, S.stream>>>(m, loc + L.o_recv, tab + g_mn.o_pos / 8);
  }
  CKLAUNCH("MoE unpack");
  return 0;
}

template <int OP>
static int moe_launch(Run *r, int iters) {
  const Args *a = r->a;
  MoeArgs m = moe_args();
  dim3 g(a->ctas), b(a->threads);
  for (int i = 0; i < iters; i++) {
    if (moe_host_nccl(a)) {
      if (int rc = moe_nccl_once(r)) return rc;
      continue;
    }
    // One kernel an operation: operation i stamps its start at times + i
    // (common.cuh: stamp_begin).
    int64_t *times = S.times + i;
    auto go = [&](auto k, auto tr) {
      launched(r, k, a->ctas, a->threads);
      k<<<g, b, 0, S.stream>>>(tr, m, times);
    };
    auto run = [&](auto tr) {
      using T = decltype(tr);
      if (g_ml.mode == MOE_LL) {
        if constexpr (OP == NB_OP_MOE_DISPATCH) go(k_moe_dispatch<T, MOE_LL>, tr);
        else if constexpr (OP == NB_OP_MOE_COMBINE) go(k_moe_combine<T, MOE_LL>, tr);
        else static_assert(unhandled<OP>, "a MoE operation without a branch");
      } else {
        if constexpr (OP == NB_OP_MOE_DISPATCH) go(k_moe_dispatch<T, MOE_NORMAL>, tr);
        else go(k_moe_combine<T, MOE_NORMAL>, tr);
      }
    };
    if (moe_lsa(a)) {
#if NB_NCCL_DEVICE
      run(MoeLsa{g_nd.wdst, g_nd.dc, S.me});
#else
      return nd_missing();
#endif
    } else {
      run(MoeNvshmem{S.dst});
    }
    CKLAUNCH("MoE kernel");
  }
  return 0;
}

// --- Checks.

// Dispatch: every slot of this PE's experts holds a message of the region
// it sits in: its header names its source and expert, the expert is one of
// the token's selections, no token twice in a region, and the payload is
// the source's token. One warp a slot; a wrong slot counts once.
__global__ void k_moe_check_dispatch(MoeArgs m, const uint8_t *slots, const uint8_t *smeta, unsigned int *seen, int64_t n, int64_t seed,
                                     unsigned long long *cnt) {
  const MoeLayout &L = m.L;
  int lane = threadIdx.x % 32;
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32) {
    MoeMeta h = ((const MoeMeta *)smeta)[j];
    int ok = h.src >= 0 && h.src < L.n && h.token >= 0 && h.token < L.t && h.k >= 0 && h.k < L.k && h.expert >= 0 && h.expert < L.e &&
             h.expert / L.el == m.me && moe_route(m, h.src, h.token, h.k) == h.expert;
    int l = ok ? h.expert % L.el : 0;
    if (ok) {
      int64_t lo = moe_roff(m, m.me, l, h.src);
      ok = j >= lo && j < lo + moe_cnt(m, h.src, h.expert);
    }
    int bad = !ok;
    if (ok) {
      const uint8_t *p = slots + j * L.sz;
      for (int64_t i = lane; i < L.tok; i += 32) bad |= p[i] != pat((int64_t)h.token * L.tok + i, h.src, seed);
    }
    bad = __any_sync(0xffffffffu, bad);
    if (lane == 0 && !bad && atomicAdd(&seen[((int64_t)l * L.n + h.src) * L.t + h.token], 1u) != 0) bad = 1;  // a token twice in its region
    if (lane == 0 && bad) mismatch(cnt, j);
  }
}

// Combine: the token's output is the weighted sum of its experts' outputs,
// to bf16's precision (the sum in fp32, then rounded; normal mode rounds
// each destination's partial too).
__global__ void k_moe_check_combine(MoeArgs m, unsigned long long *cnt) {
  const MoeLayout &L = m.L;
  const __nv_bfloat16 *out = (const __nv_bfloat16 *)(m.local + L.o_outp);
  int64_t h2 = L.out / 2;
  for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < (int64_t)L.t * h2; x += (int64_t)gridDim.x * blockDim.x) {
    int tk = (int)(x / h2);
    int64_t i = x % h2;
    float want = 0;
    for (int k = 0; k < L.k; k++) want += moe_weight(m, m.me, tk, k) * moe_f(m.me, tk, moe_route(m, m.me, tk, k), i);
    float got = __bfloat162float(out[x]);
    if (!(fabsf(got - want) <= 0.02f * fabsf(want) + 0.05f)) mismatch(cnt, x);
  }
}

// The counts every receiver knows: the signals' low words (device
// implementations) or the counts NCCL carried, against the routing.
static int moe_check_counts(const Args *a, nb_result *res) {
  const MoeLayout &L = g_ml;
  int n = L.n, me = S.me;
  int combine = a->op == NB_OP_MOE_COMBINE;
  int64_t bad = 0, checked = 0;
  if (moe_host_nccl(a)) {
    int64_t got[64];
    CK(cudaMemcpy(got, S.scratch + g_mn.o_crecv, 8 * n, cudaMemcpyDeviceToHost));
    for (int q = 0; q < n; q++, checked++) bad += got[q] != g_mn.rcnt[q];
  } else {
    int64_t words = combine ? n : (L.mode == MOE_LL ? (int64_t)L.el * n : n);
    int64_t off = combine ? L.o_csig : (L.mode == MOE_LL ? L.o_sig : L.o_sig + 8 * (int64_t)L.el * n);
    uint64_t *got = (uint64_t *)malloc(8 * words);
    if (!got) return fail(NB_ERR, "MoE: no host memory");
    CK(cudaMemcpy(got, moe_remote(a) + off, 8 * words, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < words; i++, checked++) {
      int64_t want;
      if (combine) want = moe_hback(L, me, (int)i);
      else want = L.mode == MOE_LL ? moe_hcnt(L, (int)(i % n), me * L.el + (int)(i / n)) : moe_hpairs(L, (int)i, me);
      bad += (int64_t)(got[i] & 0xffffffffull) != want;
    }
    free(got);
  }
  res->checked += checked;
  res->errors += bad;
  if (bad && !res->detail[0]) snprintf(res->detail, sizeof res->detail, "%lld of %lld counts at the receiver differ from the routing", (long long)bad, (long long)checked);
  return 0;
}

static int moe_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  const MoeLayout &L = g_ml;
  MoeArgs m = moe_args();
  int rc = moe_check_counts(a, res);
  if (rc) return rc;
  if (a->op == NB_OP_MOE_COMBINE)
    return counted((int64_t)L.t * (L.out / 2), res, [&](unsigned long long *cnt) { k_moe_check_combine<<<1024, 256, 0, S.stream>>>(m, cnt); },
                   [&](unsigned long long first, unsigned long long wrong) {
                     snprintf(res->detail, sizeof res->detail, "combined token %llu, element %llu: %llu elements off the weighted sum",
                              first / (L.out / 2), first % (L.out / 2), wrong);
                   });
  int64_t ns = 0;
  for (int l = 0; l < L.el; l++)
    for (int src = 0; src < L.n; src++) ns += moe_hcnt(L, src, S.me * L.el + l);
  CK(cudaMemsetAsync(S.scratch + L.o_seen, 0, 4 * (int64_t)L.el * L.n * L.t, S.stream));
  uint8_t *rem = moe_remote(a);
  return counted(ns, res,
                 [&](unsigned long long *cnt) {
                   k_moe_check_dispatch<<<1024, 256, 0, S.stream>>>(m, rem + L.o_slot, rem + L.o_smeta, (unsigned int *)(S.scratch + L.o_seen), ns,
                                                                    a->seed, cnt);
                 },
                 [&](unsigned long long first, unsigned long long wrong) {
                   snprintf(res->detail, sizeof res->detail, "expert slot %llu (and %llu in all) does not hold its source's token", first, wrong - 1);
                 });
}

// PE 0's selected messages (DeepEP's bandwidth: every selection counted).
static int64_t moe_bytes(Run *r) {
  if (S.me != 0) return 0;
  return (int64_t)g_ml.t * g_ml.k * (r->a->op == NB_OP_MOE_COMBINE ? g_ml.out : g_ml.tok);
}

static int64_t moe_work_set(Run *) { return g_ml.max_slots * g_ml.sz; }

static int moe_per_op_launches(Run *) { return 1; }

static const Family kMoE = {"moe", moe_validate, moe_active, moe_synced, 2, 0, 0, moe_prepare, moe_setup, nullptr, moe_bytes, moe_work_set,
                            moe_per_op_launches};

static constexpr Check kCheckMoE = {"every token's dispatched rows and combined sum", moe_check, nullptr};
static constexpr OpEntry kMoEOps[] = {
    {NB_OP_MOE_DISPATCH, "moe.dispatch", &kMoE, T_PAYLOAD, kCheckMoE, moe_launch<NB_OP_MOE_DISPATCH>},
    {NB_OP_MOE_COMBINE, "moe.combine", &kMoE, T_PAYLOAD, kCheckMoE, moe_launch<NB_OP_MOE_COMBINE>},
};
