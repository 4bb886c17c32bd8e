// moe_kernels.cuh: the MoE family's device code: the headers, the
// transports (NVSHMEM; NCCL's device API over LSA pointers), the kernels'
// view of the layout (moe_layout.h), and the device-initiated dispatch and
// combine kernels (moe.cuh says what they do). The host NCCL path's
// kernels are in moe_nccl.cuh, the checks' in moe.cuh.

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

// The local counters (uint64 words at o_done, moe_done_words): dispatch ll
// per (dest, expert), dispatch normal per dest, combine per source,
// fan-out per (expert, source).
__host__ __device__ static inline int64_t moe_d_norm(const MoeLayout &L) { return (int64_t)L.n * L.el; }
__host__ __device__ static inline int64_t moe_d_comb(const MoeLayout &L) { return (int64_t)L.n * L.el + L.n; }
__host__ __device__ static inline int64_t moe_d_fan(const MoeLayout &L) { return (int64_t)L.n * L.el + 2 * L.n; }

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
  __device__ void wait_ge(int64_t off, uint64_t v) const { spin_ge((uint64_t *)at(me, off), v); }
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

// A combine's expert outputs in their slots, with their headers (moe_f:
// what the expert computed for the message).
__global__ void k_moe_fill_slots(uint8_t *slots, uint8_t *smeta, const MoeMeta *hdr, int64_t n, int64_t sz, int64_t out) {
  for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < n * (out / 2); x += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = x / (out / 2), i = x % (out / 2);
    MoeMeta h = hdr[j];
    ((__nv_bfloat16 *)(slots + j * sz))[i] = __float2bfloat16(moe_f(h.src, h.token, h.expert, i));
    if (i == 0) ((MoeMeta *)smeta)[j] = h;
  }
}
