// latency.cuh: the latency suite's kernels and nb_lat_run (included by
// nvshbench.cu: one translation unit, one device link).
//
// Every kernel runs `iters` operations in one launch. Thread 0 reads
// %globaltimer around each operation (after its completion is observed)
// and stores the per-iteration nanoseconds, so one launch gives both the
// event-timed mean and the per-iteration distribution.

__device__ static inline uint64_t gtimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Completion latency of bulk put/get: the scope group issues the whole
// message, then quiet (nbi) or nothing (blocking: put returns when the source
// is reusable, get when the data has arrived).
template <int OP, int SCOPE, int BLOCKING>
__global__ void k_lat_bulk(uint8_t *dst, uint8_t *src, int64_t size, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    if (OP == NB_OP_PUT) {
      if (SCOPE == NB_SCOPE_BLOCK) {
        if (BLOCKING) nvshmemx_putmem_block(dst, src, size, peer);
        else nvshmemx_putmem_nbi_block(dst, src, size, peer);
      } else if (SCOPE == NB_SCOPE_WARP) {
        if (BLOCKING) nvshmemx_putmem_warp(dst, src, size, peer);
        else nvshmemx_putmem_nbi_warp(dst, src, size, peer);
      } else {
        if (BLOCKING) nvshmem_putmem(dst, src, size, peer);
        else nvshmem_putmem_nbi(dst, src, size, peer);
      }
    } else {
      if (SCOPE == NB_SCOPE_BLOCK) {
        if (BLOCKING) nvshmemx_getmem_block(dst, src, size, peer);
        else nvshmemx_getmem_nbi_block(dst, src, size, peer);
      } else if (SCOPE == NB_SCOPE_WARP) {
        if (BLOCKING) nvshmemx_getmem_warp(dst, src, size, peer);
        else nvshmemx_getmem_nbi_warp(dst, src, size, peer);
      } else {
        if (BLOCKING) nvshmem_getmem(dst, src, size, peer);
        else nvshmem_getmem_nbi(dst, src, size, peer);
      }
    }
    if (!BLOCKING) nvshmem_quiet();
    __syncthreads();
    if (threadIdx.x == 0) times[it] = (int64_t)(gtimer() - t0);
  }
}

// Scalar p / g of the message as uint64 elements spread over the block,
// then quiet (p); one iteration ends when the whole block is done.
template <int OP>
__global__ void k_lat_scalar(uint64_t *dst, const uint64_t *src, int64_t n, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = 0;
    if (threadIdx.x == 0) t0 = gtimer();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      if (OP == NB_OP_P) nvshmem_uint64_p(dst + i, src[i], peer);
      else dst[i] = nvshmem_uint64_g(src + i, peer);
    }
    if (OP == NB_OP_P) nvshmem_quiet();
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
__global__ void k_pingpong(uint8_t *dst, uint8_t *src, int64_t size, uint64_t *flag, int iters, int peer, int initiator,
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
    // send
    if (KIND == NB_LAT_PP_PUT_SIGNAL) {
      nvshmemx_putmem_signal_nbi_block(to, src, size, theirs, v, NVSHMEM_SIGNAL_SET, peer);
    } else if (KIND == NB_LAT_PP_P) {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) nvshmem_uint64_p(d64 + i, s64[i], peer);
      nvshmem_fence();
      __syncthreads();
      if (threadIdx.x == 0) nvshmem_uint64_p(theirs, v, peer);
    } else if (KIND == NB_LAT_PP_ATOMIC) {
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

// Cost of ordering: one 8-byte p followed by fence, or by quiet.
template <int KIND>
__global__ void k_lat_order(uint64_t *dst, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = gtimer();
    nvshmem_uint64_p(dst, (uint64_t)it, peer);
    if (KIND == NB_LAT_FENCE) nvshmem_fence();
    else nvshmem_quiet();
    times[it] = (int64_t)(gtimer() - t0);
  }
  nvshmem_quiet();
}

// Fetching atomics complete when they return.
template <int KIND>
__global__ void k_lat_atomic(uint64_t *slot, int iters, int peer, int64_t *times) {
  uint64_t cur = 0, sink = 0;
  for (int it = 0; it < iters; it++) {
    uint64_t t0 = gtimer();
    uint64_t old;
    if (KIND == NB_LAT_FETCH_ADD) old = nvshmem_uint64_atomic_fetch_add(slot, 1, peer);
    else {
      old = nvshmem_uint64_atomic_compare_swap(slot, cur, cur + 1, peer);
      cur = (old == cur) ? cur + 1 : old;
    }
    sink += old;
    times[it] = (int64_t)(gtimer() - t0);
  }
  if (sink == ~0ull) slot[1] = sink;
}

// One-way put + signal, completed by quiet.
__global__ void k_lat_put_signal(uint8_t *dst, uint8_t *src, int64_t size, uint64_t *flag, int iters, int peer, int64_t *times) {
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

static uint64_t *g_flag = nullptr;   // symmetric signal word (+1 spare)
static int64_t *g_times = nullptr;   // per-iteration ns of the last timed launch
static const int kMaxIters = 100000;

static bool lat_is_pingpong(int op) {
  return op == NB_LAT_PP_PUT_SIGNAL || op == NB_LAT_PP_P || op == NB_LAT_PP_ATOMIC || op == NB_LAT_PP_SIGNAL;
}

static int lat_launch(const nb_lat_args *a, int peer, int initiator, int iters) {
  cudaStream_t s = g_stream;
  int loop = peer == nvshmem_my_pe();  // ping-pong within one PE: two CTAs
  dim3 b(a->threads);
  switch (a->op) {
  case NB_LAT_PUT:
  case NB_LAT_GET: {
#define LB(OPV, SC)                                                                                         \
  if (a->blocking) k_lat_bulk<OPV, SC, 1><<<1, b, 0, s>>>(g_dst, g_src, a->size, iters, peer, g_times);        \
  else k_lat_bulk<OPV, SC, 0><<<1, b, 0, s>>>(g_dst, g_src, a->size, iters, peer, g_times);
    if (a->op == NB_LAT_PUT) {
      if (a->scope == NB_SCOPE_BLOCK) { LB(NB_OP_PUT, NB_SCOPE_BLOCK) }
      else if (a->scope == NB_SCOPE_WARP) { LB(NB_OP_PUT, NB_SCOPE_WARP) }
      else { LB(NB_OP_PUT, NB_SCOPE_THREAD) }
    } else {
      if (a->scope == NB_SCOPE_BLOCK) { LB(NB_OP_GET, NB_SCOPE_BLOCK) }
      else if (a->scope == NB_SCOPE_WARP) { LB(NB_OP_GET, NB_SCOPE_WARP) }
      else { LB(NB_OP_GET, NB_SCOPE_THREAD) }
    }
#undef LB
    break;
  }
  case NB_LAT_P:
    k_lat_scalar<NB_OP_P><<<1, b, 0, s>>>((uint64_t *)g_dst, (const uint64_t *)g_src, a->size / 8, iters, peer, g_times);
    break;
  case NB_LAT_G:
    k_lat_scalar<NB_OP_G><<<1, b, 0, s>>>((uint64_t *)g_dst, (const uint64_t *)g_src, a->size / 8, iters, peer, g_times);
    break;
  case NB_LAT_PP_PUT_SIGNAL:
    k_pingpong<NB_LAT_PP_PUT_SIGNAL><<<loop ? 2 : 1, b, 0, s>>>(g_dst, g_src, a->size, g_flag, iters, peer, initiator, loop, g_times);
    break;
  case NB_LAT_PP_P:
    k_pingpong<NB_LAT_PP_P><<<loop ? 2 : 1, b, 0, s>>>(g_dst, g_src, a->size, g_flag, iters, peer, initiator, loop, g_times);
    break;
  case NB_LAT_PP_ATOMIC:
    k_pingpong<NB_LAT_PP_ATOMIC><<<loop ? 2 : 1, b, 0, s>>>(g_dst, g_src, a->size, g_flag, iters, peer, initiator, loop, g_times);
    break;
  case NB_LAT_PP_SIGNAL:
    k_pingpong<NB_LAT_PP_SIGNAL><<<loop ? 2 : 1, b, 0, s>>>(g_dst, g_src, a->size, g_flag, iters, peer, initiator, loop, g_times);
    break;
  case NB_LAT_FENCE:
    k_lat_order<NB_LAT_FENCE><<<1, 1, 0, s>>>((uint64_t *)g_dst, iters, peer, g_times);
    break;
  case NB_LAT_QUIET:
    k_lat_order<NB_LAT_QUIET><<<1, 1, 0, s>>>((uint64_t *)g_dst, iters, peer, g_times);
    break;
  case NB_LAT_FETCH_ADD:
    k_lat_atomic<NB_LAT_FETCH_ADD><<<1, 1, 0, s>>>((uint64_t *)g_dst, iters, peer, g_times);
    break;
  case NB_LAT_CSWAP:
    k_lat_atomic<NB_LAT_CSWAP><<<1, 1, 0, s>>>((uint64_t *)g_dst, iters, peer, g_times);
    break;
  case NB_LAT_PUT_SIGNAL:
    k_lat_put_signal<<<1, b, 0, s>>>(g_dst, g_src, a->size, g_flag, iters, peer, g_times);
    break;
  case NB_LAT_LAUNCH:
    for (int i = 0; i < iters; i++) k_empty<<<1, 1, 0, s>>>();
    break;
  default:
    return fail(-1, "unknown latency op %d", a->op);
  }
  CKLAUNCH("latency kernel");
  return 0;
}

// Ops whose data lands on the target (put side); the others on the
// initiator. Ops without payload check nothing but their counters.
static bool lat_payload_remote(int op) { return op == NB_LAT_PUT || op == NB_LAT_P || op == NB_LAT_PUT_SIGNAL; }
static bool lat_has_payload(int op) {
  return op == NB_LAT_PUT || op == NB_LAT_GET || op == NB_LAT_P || op == NB_LAT_G || op == NB_LAT_PUT_SIGNAL ||
         op == NB_LAT_PP_PUT_SIGNAL || op == NB_LAT_PP_P;
}

extern "C" int nb_lat_run(const nb_lat_args *a, double *samples_out, int max_samples, nb_lat_result *res) {
  memset(res, 0, sizeof *res);
  if (!g_inited) return fail(-1, "not initialised");
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (a->peer < 0 || a->peer >= npes) return fail(-1, "peer %d out of range (%d PEs)", a->peer, npes);
  if (a->size <= 0 || a->size > g_buf) return fail(-1, "size %lld outside 1..%lld", (long long)a->size, (long long)g_buf);
  if (a->threads <= 0 || a->threads > 1024) return fail(-1, "threads %d invalid", a->threads);
  if (a->iters < 0 || a->iters > kMaxIters || a->samples <= 0 || a->warmup < 0) return fail(-1, "iters 0..%d, samples > 0", kMaxIters);
  if ((a->op == NB_LAT_P || a->op == NB_LAT_G || a->op == NB_LAT_PP_P) && a->size % 8) return fail(-1, "size %lld is not a multiple of 8", (long long)a->size);
  bool pp = lat_is_pingpong(a->op);
  if (pp && a->peer == me && 2 * a->size > g_buf) return fail(-1, "loopback ping-pong needs 2 x size of buffer");
  if (!g_flag) {
    g_flag = (uint64_t *)nvshmem_malloc(2 * sizeof(uint64_t));
    if (!g_flag) return fail(-1, "nvshmem_malloc of the signal word failed");
    CK(cudaMalloc(&g_times, kMaxIters * sizeof(int64_t)));
  }
  // Roles: PE 0 initiates towards peer; in ping-pong the peer responds.
  int initiator = me == 0;
  bool responder = pp && me == a->peer && !initiator;  // loopback: PE 0 is both (two CTAs)
  bool active = initiator || responder;
  int target = initiator ? a->peer : 0;

  k_fill<<<1024, 256, 0, g_stream>>>(g_src, a->size, me, a->seed);
  if (a->verify) k_poison<<<1024, 256, 0, g_stream>>>(g_dst, a->size);
  CKLAUNCH("fill kernels");
  CK(cudaMemsetAsync(g_flag, 0, 2 * sizeof(uint64_t), g_stream));
  CK(cudaStreamSynchronize(g_stream));
  nvshmem_barrier_all();

  // Iterations per launch: calibrated on PE 0 where only PE 0 launches;
  // both sides of a ping-pong run a fixed count.
  int iters = a->iters;
  if (iters == 0) {
    iters = pp ? 1000 : 0;
    if (!pp && initiator) {
      CK(cudaEventRecord(g_ev0, g_stream));
      int rc = lat_launch(a, target, 1, 10);
      if (rc) return rc;
      CK(cudaEventRecord(g_ev1, g_stream));
      CK(cudaEventSynchronize(g_ev1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
      double n = 10 * 20.0 / (ms > 1e-4 ? ms : 1e-4);
      iters = n < 10 ? 10 : (n > 1000 ? 1000 : (int)n);
    }
  }
  int64_t n_used = 0;
  int timed = a->timer == 0 ? a->samples : 1;  // the in-kernel timer needs one launch
  for (int sIdx = -a->warmup; sIdx < timed; sIdx++) {
    if (pp) nvshmem_barrier_all();  // both sides start each launch together; the flag restarts from 0
    if (pp) {
      CK(cudaMemsetAsync(g_flag, 0, 2 * sizeof(uint64_t), g_stream));
      CK(cudaStreamSynchronize(g_stream));
      nvshmem_barrier_all();
    }
    if (!active) continue;
    CK(cudaEventRecord(g_ev0, g_stream));
    int rc = lat_launch(a, target, initiator, iters);
    if (rc) return rc;
    CK(cudaEventRecord(g_ev1, g_stream));
    CK(cudaEventSynchronize(g_ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    if (sIdx < 0 || !initiator) continue;
    if (a->timer == 0) {
      if (sIdx < max_samples) samples_out[n_used++] = (double)ms * 1e-3 / iters;
    } else if (sIdx == 0 && a->op != NB_LAT_LAUNCH) {
      // The in-kernel distribution of the first timed launch.
      int n = iters < max_samples ? iters : max_samples;
      int64_t *h = (int64_t *)malloc(n * sizeof(int64_t));
      CK(cudaMemcpy(h, g_times, n * sizeof(int64_t), cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; i++) samples_out[n_used++] = (double)(h[i] > 0 ? h[i] : 1) * 1e-9;
      free(h);
    }
  }
  CK(cudaStreamSynchronize(g_stream));
  res->n_samples = n_used;
  res->initiator = initiator;
  res->iters = a->timer == 0 ? iters : 1;
  res->bytes = initiator && lat_has_payload(a->op) ? a->size : 0;
  nvshmem_barrier_all();

  if (a->verify && lat_has_payload(a->op)) {
    bool check = false;
    int src_pe = -1;
    if (pp) {
      check = active;  // both sides received the other's payload (loopback: the initiator's half)
      src_pe = initiator ? a->peer : 0;
    } else if (lat_payload_remote(a->op)) {
      if (me == a->peer) { check = true; src_pe = 0; }
    } else if (initiator) {
      check = true;
      src_pe = target;
    }
    if (check) {
      int rc = check_bytes(a->size, src_pe, a->seed, res);
      if (rc) return rc;
    }
  }
  nvshmem_barrier_all();
  return reduce_checks(res, me);
}
