// latency.cuh: the latency family and its entries in the dispatch table
// (included by nvshbench.cu).
//
// Every kernel runs `iters` operations in one launch of one CTA. Thread 0
// reads %globaltimer around each operation (after its completion is
// observed) and stores the per-iteration nanoseconds, so one launch gives
// both the event-timed mean and the per-iteration distribution.
//
// A latency is a round trip: iteration i+1 cannot start before i's result
// is back. put and p complete with quiet (the remote acknowledgement);
// get and g chase pointers: the peer's source holds a chain of blocks
// spread over NB_CHAIN_BYTES (several times the L2), each block's first
// word naming the next, and the next transfer's address is read from what
// the last one delivered, so neither overlap nor a cache can answer.
// Operations that only issue (a blocking put returns when its source is
// reusable, fence only orders) are the rate rows of the Go side.

// The family's operation codes (private; see rma.cuh).
enum {
  NB_OP_LAT_PUT = 21,    // putmem (scope) + quiet per iteration; blocking: the call alone (issue time)
  NB_OP_LAT_GET = 22,    // pointer chase: getmem of block k, the next k read from what arrived
  NB_OP_LAT_P = 23,      // the message as uint64 p's over the CTA + quiet
  NB_OP_LAT_G = 24,      // pointer chase with uint64 g's: the next block from the loaded word
  NB_OP_PP_PUT_SIGNAL = 25, // ping-pong round trip: putmem_signal_nbi_block, wait on the signal
  NB_OP_PP_P = 26,       // ping-pong: p's + fence + p of a flag
  NB_OP_PP_ATOMIC = 27,  // ping-pong: atomic add of a flag
  NB_OP_PP_SIGNAL = 28,  // ping-pong: signal_op only
  NB_OP_LAT_FENCE = 29,  // 8-byte p + fence (ordering only: an issue time)
  NB_OP_LAT_QUIET = 30,  // 8-byte p + quiet (completion)
  NB_OP_LAT_FETCH_ADD = 31, // fetching atomic; the next address depends on the value returned
  NB_OP_LAT_CSWAP = 32,
  NB_OP_LAT_PUT_SIGNAL = 33, // one-way putmem_signal_nbi_block + quiet
  NB_OP_LAT_LAUNCH = 34, // empty kernels launched back to back: the floor of host-issued work
};

__device__ static inline uint64_t gtimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

// The chain: n blocks of stride bytes (n a power of two); block k's first
// word is the index of the next block, a full-period linear congruential
// step, so consecutive hops land far apart and the walk visits every block
// before it repeats.
__host__ __device__ static inline uint64_t chain_next(uint64_t k, uint64_t n) {
  return (k * 6364136223846793005ull + 1442695040888963407ull) & (n - 1);
}

struct Chain {
  int64_t stride, n;
};

static Chain chain_of(int64_t size) {
  Chain c;
  int64_t s = size < 128 ? 128 : size;
  c.stride = (s + 127) & ~127ll;
  int64_t bytes = S.buf < NB_CHAIN_BYTES ? S.buf : NB_CHAIN_BYTES;
  int64_t n = 1;
  while (2 * n * c.stride <= bytes) n *= 2;
  c.n = n;
  return c;
}

__global__ void k_chain_words(uint8_t *b, int64_t stride, int64_t n) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    *(uint64_t *)(b + k * stride) = chain_next((uint64_t)k, (uint64_t)n);
}

// Checks a delivered block: its first word is next, the rest is src_pe's
// pattern at the block's offset base.
__global__ void k_check_block(const uint8_t *b, int64_t size, int64_t base, uint64_t next, int pe, int64_t seed,
                              unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < size; i += (int64_t)gridDim.x * blockDim.x) {
    uint8_t want = i < 8 ? (uint8_t)(next >> (8 * i)) : pat(base + i, pe, seed);
    if (b[i] != want) {
      atomicAdd(cnt, 1ull);
      atomicMin(cnt + 1, (unsigned long long)i);
    }
  }
}

// put (scope) + quiet per iteration (round trip); blocking: the call alone.
template <int SCOPE, int BLOCKING>
__global__ void k_lat_put(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    bulk_op<NB_OP_PUT, SCOPE, BLOCKING>(dst, src, size, peer);
    if (!BLOCKING) nvshmem_quiet();
    __syncthreads();
    if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
  }
}

// chase runs a pointer chase of one CTA: iteration it fetches block cur of
// the peer's chain with hop(cur), which every thread calls and which ends
// with the CTA synchronised and returns, on thread 0, the block's first
// word: the index of the next block. Thread 0 times each hop from its start
// to that word, so iteration it + 1 cannot begin before it's data arrived.
// The cursor continues across launches (the chain is never re-walked from
// its start, where a cache could answer).
template <typename Hop>
__device__ static inline void chase(int64_t *cursor, int64_t n, int iters, int64_t *times, Hop hop) {
  __shared__ volatile int64_t cur;
  if (threadIdx.x == 0) cur = *cursor;
  __syncthreads();
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    uint64_t first = hop(cur);
    if (threadIdx.x == 0) {
      cur = (int64_t)(first & (uint64_t)(n - 1));
      times[it] = (int64_t)(gtimer() - t0);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *cursor = cur;
}

// Pointer chase with bulk get (scope; nbi + quiet or blocking): fetch block
// cur of the peer's chain into dst, read the next index from dst.
template <int SCOPE, int BLOCKING>
__global__ void k_lat_get(uint8_t *dst, const uint8_t *src, int64_t size, int64_t stride, int64_t n, int64_t *cursor,
                          int iters, int peer, int64_t *times) {
  chase(cursor, n, iters, times, [&](int64_t cur) -> uint64_t {
    bulk_op<NB_OP_GET, SCOPE, BLOCKING>(dst, src + cur * stride, size, peer);
    if (!BLOCKING) nvshmem_quiet();
    __syncthreads();
    return threadIdx.x == 0 ? *(volatile uint64_t *)dst : 0;  // waits for the data
  });
}

// Pointer chase with uint64 g's: the CTA loads block cur word by word, the
// next index is the first word.
__global__ void k_lat_g(uint64_t *dst, const uint8_t *src, int64_t words, int64_t stride, int64_t n, int64_t *cursor,
                        int iters, int peer, int64_t *times) {
  chase(cursor, n, iters, times, [&](int64_t cur) -> uint64_t {
    const uint64_t *blk = (const uint64_t *)(src + cur * stride);
    uint64_t first = 0;
    for (int64_t i = threadIdx.x; i < words; i += blockDim.x) {
      uint64_t v = nvshmem_uint64_g(blk + i, peer);
      dst[i] = v;
      if (i == 0) first = v;
    }
    __syncthreads();
    return first;  // thread 0's: waits for the load
  });
}

// The message as uint64 p's spread over the block, then quiet.
__global__ void k_lat_p(uint64_t *dst, const uint64_t *src, int64_t n, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) nvshmem_uint64_p(dst + i, src[i], peer);
    nvshmem_quiet();
    __syncthreads();
    if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
  }
}

// Ping-pong round trip. The initiator sends and waits for the reply; the
// responder waits and replies. Iteration i is acknowledged by signal value
// i+1, so no reset is needed between iterations. Two modes:
//  - two PEs (loopback = 0): each PE runs one CTA; both wait on their own
//    flag[0] and signal the other's flag[0];
//  - loopback (one PE, loopback = 1): CTA 0 is the initiator and CTA 1 the
//    responder, through the PE's own symmetric memory: flag[0] is the
//    initiator's, flag[1] the responder's; the responder's payload lands in
//    the second half of the buffer.
template <int KIND>
__global__ void k_pingpong(uint8_t *dst, const uint8_t *src, int64_t size, uint64_t *flag, int iters, int peer, int initiator,
                           int loopback, int64_t *times) {
  if (loopback) initiator = blockIdx.x == 0;
  uint64_t *mine = flag + (loopback && !initiator ? 1 : 0);
  uint64_t *theirs = flag + (loopback && initiator ? 1 : 0);
  uint8_t *to = dst + (loopback && !initiator ? size : 0);
  uint64_t *d64 = (uint64_t *)to;
  const uint64_t *s64 = (const uint64_t *)src;
  int64_t n = size / 8;
  for (int it = 0; it < iters; it++) {
    uint64_t v = (uint64_t)it + 1;
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    if (!initiator) {
      if (threadIdx.x == 0) nvshmem_signal_wait_until(mine, NVSHMEM_CMP_GE, v);
      __syncthreads();
    }
    if (KIND == NB_OP_PP_PUT_SIGNAL) {
      nvshmemx_putmem_signal_nbi_block(to, src, size, theirs, v, NVSHMEM_SIGNAL_SET, peer);
    } else if (KIND == NB_OP_PP_P) {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) nvshmem_uint64_p(d64 + i, s64[i], peer);
      nvshmem_fence();
      __syncthreads();
      if (threadIdx.x == 0) nvshmem_uint64_p(theirs, v, peer);
    } else if (KIND == NB_OP_PP_ATOMIC) {
      if (threadIdx.x == 0) nvshmem_uint64_atomic_add(theirs, 1, peer);
    } else {
      if (threadIdx.x == 0) nvshmemx_signal_op(theirs, v, NVSHMEM_SIGNAL_SET, peer);
    }
    if (initiator) {
      if (threadIdx.x == 0) nvshmem_signal_wait_until(mine, NVSHMEM_CMP_GE, v);
      __syncthreads();
      if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
    }
  }
  nvshmem_quiet();
}

// One 8-byte p followed by fence (ordering only) or quiet (completion).
template <int KIND>
__global__ void k_lat_order(uint64_t *dst, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = gtimer();
    nvshmem_uint64_p(dst, (uint64_t)it, peer);
    if (KIND == NB_OP_LAT_FENCE) nvshmem_fence();
    else nvshmem_quiet();
    times[it] = (int64_t)(gtimer() - t0);
  }
  nvshmem_quiet();
}

// Fetching atomics: the next operation's address depends on the value the
// last one returned (masked with zero, a kernel argument the compiler
// cannot see through), so they run one after the other.
template <int KIND>
__global__ void k_lat_atomic(uint64_t *slot, int iters, int peer, int64_t *times, uint64_t zero) {
  __shared__ volatile uint64_t dep;
  uint64_t cur = 0, d = 0;
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = gtimer();
    uint64_t old;
    if (KIND == NB_OP_LAT_FETCH_ADD) old = nvshmem_uint64_atomic_fetch_add(slot + d, 1, peer);
    else {
      old = nvshmem_uint64_atomic_compare_swap(slot + d, cur, cur + 1, peer);
      cur = (old == cur) ? cur + 1 : old;
    }
    d = old & zero;
    dep = d;  // waits for the value
    times[it] = (int64_t)(gtimer() - t0);
  }
}

// One-way put + signal, completed by quiet.
__global__ void k_lat_put_signal(uint8_t *dst, const uint8_t *src, int64_t size, uint64_t *flag, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    nvshmemx_putmem_signal_nbi_block(dst, src, size, flag, (uint64_t)it + 1, NVSHMEM_SIGNAL_SET, peer);
    nvshmem_quiet();
    __syncthreads();
    if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
  }
}

__global__ void k_empty() {}

// ---------------------------------------------------------------------------
enum { LANDS_NONE = 0, LANDS_AT_TARGET = 1, LANDS_CHASED = 2, LANDS_BOTH_WAYS = 3 };

static int lat_is_pingpong(int op) {
  return op == NB_OP_PP_PUT_SIGNAL || op == NB_OP_PP_P || op == NB_OP_PP_ATOMIC || op == NB_OP_PP_SIGNAL;
}

static int lat_validate(Run *r) {
  const Args *a = r->a;
  int pp = lat_is_pingpong(a->op);
  r->initiator = S.me == 0;
  r->target = r->initiator ? a->peer : 0;
  if (a->size <= 0 || a->size > S.buf) return fail(NB_ERR, "size %lld outside 1..%lld", (long long)a->size, (long long)S.buf);
  if (a->threads <= 0 || a->threads > 1024) return fail(NB_ERR, "threads %d invalid", a->threads);
  if ((a->op == NB_OP_LAT_P || a->op == NB_OP_LAT_G || a->op == NB_OP_PP_P) && a->size % 8)
    return fail(NB_ERR, "size %lld is not a multiple of 8", (long long)a->size);
  if (pp && a->peer == S.me && 2 * a->size > S.buf) return fail(NB_ERR, "loopback ping-pong needs 2 x size of buffer");
  if (r->e->lands == LANDS_CHASED && chain_of(a->size).n < 2)
    return fail(NB_ERR, "a pointer chase of %lld-byte blocks needs a larger buffer", (long long)a->size);
  return 0;
}

static int lat_active(Run *r) {
  return r->initiator || (lat_is_pingpong(r->a->op) && S.me == r->a->peer);
}
static int lat_synced(Run *r) { return lat_is_pingpong(r->a->op); }
static double lat_per_op(Run *) { return 1.0; }

static int lat_prepare(Run *r) {
  const Args *a = r->a;
  int rc;
  if (r->e->lands == LANDS_CHASED) {
    Chain c = chain_of(a->size);
    if ((rc = fill_src(c.n * c.stride, a->seed))) return rc;
    k_chain_words<<<1024, 256, 0, S.stream>>>(S.src, c.stride, c.n);
    CKLAUNCH("chain kernel");
  } else if ((rc = fill_src(a->size, a->seed))) {
    return rc;
  }
  if (a->verify && (rc = poison_dst(lat_is_pingpong(a->op) ? 2 * a->size : a->size))) return rc;
  CK(cudaMemsetAsync(S.flag, 0, 2 * sizeof(uint64_t), S.stream));
  CK(cudaMemsetAsync(S.cursor, 0, sizeof(int64_t), S.stream));
  return 0;
}

// A ping-pong restarts its signal values from 1 at every launch.
static int lat_before_launch(Run *r) {
  if (!lat_is_pingpong(r->a->op)) return 0;
  CK(cudaMemsetAsync(S.flag, 0, 2 * sizeof(uint64_t), S.stream));
  CK(cudaStreamSynchronize(S.stream));
  return 0;
}

static int lat_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  switch (r->e->lands) {
  case LANDS_AT_TARGET:
    if (S.me != a->peer) return 0;
    return check_bytes(S.dst, a->size, 0, 0, a->seed, res);
  case LANDS_BOTH_WAYS:  // each side received the other's payload (loopback: the initiator's half)
    if (!lat_active(r)) return 0;
    return check_bytes(S.dst, a->size, 0, r->initiator ? a->peer : 0, a->seed, res);
  case LANDS_CHASED: {
    if (!r->initiator || r->ops <= 0) return 0;
    // r->ops hops from block 0: dst holds the block of the last hop.
    Chain c = chain_of(a->size);
    uint64_t last = 0;
    for (int64_t i = 1; i < r->ops; i++) last = chain_next(last, (uint64_t)c.n);
    int rc = count_reset();
    if (rc) return rc;
    int64_t base = (int64_t)last * c.stride;
    k_check_block<<<256, 256, 0, S.stream>>>(S.dst, a->size, base, chain_next(last, (uint64_t)c.n), a->peer, a->seed, S.count);
    CKLAUNCH("chase check kernel");
    unsigned long long h[2];
    if ((rc = count_read(h))) return rc;
    res->checked += a->size;
    res->errors += (int64_t)h[0];
    if (h[0] && !res->detail[0])
      snprintf(res->detail, sizeof res->detail, "byte %llu of chain block %llu (hop %lld) wrong", h[1],
               (unsigned long long)last, (long long)r->ops);
    return 0;
  }
  }
  return 0;
}

static int lat_has_payload(int op) {
  return op == NB_OP_LAT_PUT || op == NB_OP_LAT_GET || op == NB_OP_LAT_P || op == NB_OP_LAT_G || op == NB_OP_LAT_PUT_SIGNAL ||
         op == NB_OP_PP_PUT_SIGNAL || op == NB_OP_PP_P;
}

static int64_t lat_bytes(Run *r) { return r->initiator && lat_has_payload(r->a->op) ? r->a->size : 0; }

static int64_t lat_work_set(Run *r) {
  if (r->e->lands == LANDS_CHASED) {
    Chain c = chain_of(r->a->size);
    return c.n * c.stride;
  }
  return path_to(r->a->peer) == NB_PATH_LOCAL ? 2 * r->a->size : r->a->size;
}

static const Family kLat = {"latency", lat_validate, lat_active, lat_synced, 10, 0, lat_per_op, lat_prepare, nullptr,
                            lat_before_launch, lat_check, lat_bytes, lat_work_set};
// Ping-pongs are not calibrated: both sides run the same fixed count.
static const Family kLatPP = {"ping-pong", lat_validate, lat_active, lat_synced, 0, 1000, lat_per_op, lat_prepare, nullptr,
                              lat_before_launch, lat_check, lat_bytes, lat_work_set};

// --- launches
static int launch_lat_put(Run *r, int iters) {
  const Args *a = r->a;
  dim3 b(a->threads);
  with_scope(a->scope, [&](auto sc) {
    with_flag(a->blocking, [&](auto bl) {
      k_lat_put<decltype(sc)::value, decltype(bl)::value><<<1, b, 0, S.stream>>>(S.dst, S.src, a->size, iters, r->target, S.times);
    });
  });
  CKLAUNCH("put latency kernel");
  return 0;
}

static int launch_lat_get(Run *r, int iters) {
  const Args *a = r->a;
  Chain c = chain_of(a->size);
  dim3 b(a->threads);
  with_scope(a->scope, [&](auto sc) {
    with_flag(a->blocking, [&](auto bl) {
      k_lat_get<decltype(sc)::value, decltype(bl)::value><<<1, b, 0, S.stream>>>(S.dst, S.src, a->size, c.stride, c.n, S.cursor, iters,
                                                                                  r->target, S.times);
    });
  });
  CKLAUNCH("get latency kernel");
  return 0;
}

static int launch_lat_g(Run *r, int iters) {
  Chain c = chain_of(r->a->size);
  k_lat_g<<<1, r->a->threads, 0, S.stream>>>((uint64_t *)S.dst, S.src, r->a->size / 8, c.stride, c.n, S.cursor, iters, r->target, S.times);
  CKLAUNCH("g latency kernel");
  return 0;
}

static int launch_lat_p(Run *r, int iters) {
  k_lat_p<<<1, r->a->threads, 0, S.stream>>>((uint64_t *)S.dst, (const uint64_t *)S.src, r->a->size / 8, iters, r->target, S.times);
  CKLAUNCH("p latency kernel");
  return 0;
}

template <int KIND>
static int launch_pingpong(Run *r, int iters) {
  int loop = r->target == S.me;  // one PE: two CTAs
  k_pingpong<KIND><<<loop ? 2 : 1, r->a->threads, 0, S.stream>>>(S.dst, S.src, r->a->size, S.flag, iters, r->target, r->initiator,
                                                                 loop, S.times);
  CKLAUNCH("ping-pong kernel");
  return 0;
}

template <int KIND>
static int launch_order(Run *r, int iters) {
  k_lat_order<KIND><<<1, 1, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, S.times);
  CKLAUNCH("fence/quiet kernel");
  return 0;
}

template <int KIND>
static int launch_lat_atomic(Run *r, int iters) {
  k_lat_atomic<KIND><<<1, 1, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, S.times, 0);
  CKLAUNCH("atomic latency kernel");
  return 0;
}

static int launch_lat_put_signal(Run *r, int iters) {
  k_lat_put_signal<<<1, r->a->threads, 0, S.stream>>>(S.dst, S.src, r->a->size, S.flag, iters, r->target, S.times);
  CKLAUNCH("put-signal latency kernel");
  return 0;
}

static int launch_empty(Run *, int iters) {
  for (int i = 0; i < iters; i++) k_empty<<<1, 1, 0, S.stream>>>();
  CKLAUNCH("empty kernel");
  return 0;
}

static const OpEntry kLatOps[] = {
    {NB_OP_LAT_PUT, "lat.put", &kLat, LANDS_AT_TARGET, launch_lat_put},
    {NB_OP_LAT_GET, "lat.get", &kLat, LANDS_CHASED, launch_lat_get},
    {NB_OP_LAT_P, "lat.p", &kLat, LANDS_AT_TARGET, launch_lat_p},
    {NB_OP_LAT_G, "lat.g", &kLat, LANDS_CHASED, launch_lat_g},
    {NB_OP_PP_PUT_SIGNAL, "lat.pp_put_signal", &kLatPP, LANDS_BOTH_WAYS, launch_pingpong<NB_OP_PP_PUT_SIGNAL>},
    {NB_OP_PP_P, "lat.pp_p", &kLatPP, LANDS_BOTH_WAYS, launch_pingpong<NB_OP_PP_P>},
    {NB_OP_PP_ATOMIC, "lat.pp_atomic", &kLatPP, LANDS_NONE, launch_pingpong<NB_OP_PP_ATOMIC>},
    {NB_OP_PP_SIGNAL, "lat.pp_signal", &kLatPP, LANDS_NONE, launch_pingpong<NB_OP_PP_SIGNAL>},
    {NB_OP_LAT_FENCE, "lat.fence", &kLat, LANDS_NONE, launch_order<NB_OP_LAT_FENCE>},
    {NB_OP_LAT_QUIET, "lat.quiet", &kLat, LANDS_NONE, launch_order<NB_OP_LAT_QUIET>},
    {NB_OP_LAT_FETCH_ADD, "lat.fetch_add", &kLat, LANDS_NONE, launch_lat_atomic<NB_OP_LAT_FETCH_ADD>},
    {NB_OP_LAT_CSWAP, "lat.compare_swap", &kLat, LANDS_NONE, launch_lat_atomic<NB_OP_LAT_CSWAP>},
    {NB_OP_LAT_PUT_SIGNAL, "lat.put_signal", &kLat, LANDS_AT_TARGET, launch_lat_put_signal},
    {NB_OP_LAT_LAUNCH, "lat.launch", &kLat, LANDS_NONE, launch_empty},
};
