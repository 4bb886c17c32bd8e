// latency.cuh: the latency family and its entries in the dispatch table
// (included by nvshbench.cu), and the in-run floors every round trip is
// compared with (limit/chase-*).
//
// Every kernel runs `iters` operations in one launch of one CTA. The figure
// is the events timer around the launch (the mean per operation); thread 0
// also stamps %globaltimer at the start of every iteration and at the end
// of the loop into S.times: the per-iteration distribution of the same
// launch, which must agree with the events.
//
// A latency is a round trip: iteration i+1 cannot start before i's result
// is back. put and p complete with quiet (the remote acknowledgement);
// get and g chase pointers through a chain of blocks in the peer's source
// (chain.cuh: memory-served, at least 4 x L2, the L2 flushed), the next
// transfer's address read from what the last one delivered, so neither
// overlap nor a cache can answer. Operations that only issue (a blocking
// put returns when its source is reusable, fence only orders) carry no
// T_ROUNDTRIP and are the issue rows of the Go side. The floors are one
// thread's dependent 8-byte loads through a chain, one line a hop, the L1
// bypassed: memory-served or cache-served (args.extent).

// The family's operation codes (private; see rma.cuh).
enum {
  NB_OP_LAT_PUT = 21,    // putmem_nbi (scope) + quiet per iteration
  NB_OP_LAT_GET = 22,    // pointer chase: getmem of block k, the next k read from what arrived
  NB_OP_LAT_P = 23,      // the message as uint64 p's over the CTA + quiet
  NB_OP_LAT_G = 24,      // pointer chase with uint64 g's: the next block from the loaded word
  NB_OP_PP_PUT_SIGNAL = 25, // ping-pong round trip: putmem_signal_nbi_block, wait on the signal
  NB_OP_PP_P = 26,       // ping-pong: p's + fence + p of a flag
  NB_OP_PP_ATOMIC = 27,  // ping-pong: atomic add of a flag
  NB_OP_PP_SIGNAL = 28,  // ping-pong: signal_op only
  NB_OP_PP_SIGNAL_SPIN = 162, // ping-pong: signal_op, each side waiting in its own acquire loop, not signal_wait_until
  NB_OP_LAT_FENCE = 29,  // 8-byte p + fence (ordering only: an issue time)
  NB_OP_LAT_QUIET = 30,  // 8-byte p + quiet (completion)
  NB_OP_LAT_PUT_SIGNAL = 33, // one-way putmem_signal_nbi_block + quiet
  NB_OP_LAT_LAUNCH = 34, // empty kernels launched back to back: the floor of host-issued work
  NB_OP_LAT_PUT_ISSUE = 37, // blocking putmem (scope): the call alone, an issue time
  NB_OP_LAT_CHASE = 38,  // the floor: one thread's dependent 8-byte loads through a chain (limit/chase-*)
};

// stamp (common.cuh): thread 0 records %globaltimer at the start of every
// iteration and at the end of the loop (reading the timer around only the
// operation misses the loop's own cost and reads under the events).

// put (scope) + quiet per iteration (round trip); blocking: the call alone.
template <int SCOPE, int BLOCKING>
__global__ void k_lat_put(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    bulk_op<NB_OP_PUT, SCOPE, BLOCKING>(dst, src, size, peer);
    if (!BLOCKING) nvshmem_quiet();
    __syncthreads();
  }
  stamp(times, iters);
}

// The floor: one thread's dependent 8-byte loads through the chain (L2, not
// L1: a repeated line is never an L1 hit), NB_FLOOR_HOPS of them between two
// stamps, the block's address from its index by a shift (the floors' blocks
// are 128-byte lines, chain_of(8, ...)). Nothing else is on the critical
// path: no shared memory, no barrier, a stamp every NB_FLOOR_HOPS hops, so
// a hop costs what a plain chase (one thread, p = *p) costs.
__global__ void k_lat_chase(const uint8_t *chain, int64_t n, int64_t *cursor, int iters, int64_t *times) {
  uint64_t cur = (uint64_t)*cursor, last = (uint64_t)n - 1;
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
#pragma unroll
    for (int h = 0; h < NB_FLOOR_HOPS; h++) {
      uint64_t next = __ldcg((const unsigned long long *)(chain + (cur << 7)));
      cur = next < last ? next : last;  // a damaged word stays inside the chain (the check sees it)
    }
  }
  stamp(times, iters);
  *cursor = (int64_t)cur;
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
    stamp(times, it);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) nvshmem_uint64_p(dst + i, src[i], peer);
    nvshmem_quiet();
    __syncthreads();
  }
  stamp(times, iters);
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
  // The wait: NVSHMEM's signal_wait_until, or (the spin row) a system-scope
  // acquire load in a loop, as kernels that poll their own flags do
  // (NVSHMEM 3.8's signal_wait_until adds a GPU-scope fence and an L1
  // invalidate after its poll, in a call: the spin row is the same round
  // trip without them).
  auto wait_for = [&](uint64_t v) {
    if (threadIdx.x == 0) {
      if constexpr (KIND == NB_OP_PP_SIGNAL_SPIN) {
        spin_ge(mine, v);
      } else {
        nvshmem_signal_wait_until(mine, NVSHMEM_CMP_GE, v);
      }
    }
    __syncthreads();
  };
  for (int it = 0; it < iters; it++) {
    uint64_t v = (uint64_t)it + 1;
    if (initiator) stamp(times, it);
    if (!initiator) wait_for(v);
    if constexpr (KIND == NB_OP_PP_PUT_SIGNAL) {
      nvshmemx_putmem_signal_nbi_block(to, src, size, theirs, v, NVSHMEM_SIGNAL_SET, peer);
    } else if constexpr (KIND == NB_OP_PP_P) {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) nvshmem_uint64_p(d64 + i, s64[i], peer);
      nvshmem_fence();
      __syncthreads();
      if (threadIdx.x == 0) nvshmem_uint64_p(theirs, v, peer);
    } else if constexpr (KIND == NB_OP_PP_ATOMIC) {
      if (threadIdx.x == 0) nvshmem_uint64_atomic_add(theirs, 1, peer);
    } else if constexpr (KIND == NB_OP_PP_SIGNAL || KIND == NB_OP_PP_SIGNAL_SPIN) {
      if (threadIdx.x == 0) nvshmemx_signal_op(theirs, v, NVSHMEM_SIGNAL_SET, peer);
    } else static_assert(unhandled<KIND>, "a ping-pong without a branch");
    if (initiator) wait_for(v);
  }
  if (initiator) stamp(times, iters);
  nvshmem_quiet();
}

// One 8-byte p followed by fence (ordering only) or quiet (completion).
template <int KIND>
__global__ void k_lat_order(uint64_t *dst, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    nvshmem_uint64_p(dst, (uint64_t)it, peer);
    if constexpr (KIND == NB_OP_LAT_FENCE) nvshmem_fence();
    else if constexpr (KIND == NB_OP_LAT_QUIET) nvshmem_quiet();
    else static_assert(unhandled<KIND>, "an ordering operation without a branch");
  }
  stamp(times, iters);
  nvshmem_quiet();
}


// One-way put + signal, completed by quiet.
__global__ void k_lat_put_signal(uint8_t *dst, const uint8_t *src, int64_t size, uint64_t *flag, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    nvshmemx_putmem_signal_nbi_block(dst, src, size, flag, (uint64_t)it + 1, NVSHMEM_SIGNAL_SET, peer);
    nvshmem_quiet();
    __syncthreads();
  }
  stamp(times, iters);
}

__global__ void k_empty() {}

// ---------------------------------------------------------------------------
// The chain of a chasing point: size-byte blocks (the floors: 8-byte hops,
// one line each) over args.extent bytes (0: memory-served).
static Chain lat_chain(const Run *r) { return chain_of(has(r, T_FLOOR) ? 8 : r->a->size, r->a->extent); }

static int lat_validate(Run *r) {
  const Args *a = r->a;
  int pp = has(r, T_PINGPONG);
  r->initiator = S.me == a->initiator;
  r->target = r->initiator ? a->peer : a->initiator;  // a ping-pong's responder answers the initiator
  if (a->size <= 0 || a->size > S.buf) return fail(NB_ERR, "size %lld outside 1..%lld", (long long)a->size, (long long)S.buf);
  if (a->threads <= 0 || a->threads > 1024) return fail(NB_ERR, "threads %d invalid", a->threads);
  if ((a->op == NB_OP_LAT_P || a->op == NB_OP_LAT_G || a->op == NB_OP_PP_P) && a->size % 8)
    return fail(NB_ERR, "size %lld is not a multiple of 8", (long long)a->size);
  if (pp && a->peer == S.me && 2 * a->size > S.buf) return fail(NB_ERR, "loopback ping-pong needs 2 x size of buffer");
  if (has(r, T_CHASE) && lat_chain(r).n < 2)
    return fail(NB_ERR, "a pointer chase of %lld-byte blocks needs a larger buffer", (long long)a->size);
  if (a->extent < 0 || a->extent > S.buf) return fail(NB_ERR, "chain extent %lld outside 0..%lld", (long long)a->extent, (long long)S.buf);
  if (r->initiator && has(r, T_LOADSTORE) && nvshmem_ptr(S.src, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d (no P2P mapping)", r->target, S.me);
  return 0;
}

static int lat_active(Run *r) {
  return r->initiator || (has(r, T_PINGPONG) && S.me == r->a->peer);
}
static int lat_synced(Run *r) { return has(r, T_PINGPONG); }

// The checks of the latency family: where each round trip's result lands on
// this PE and what it must hold there.
static Region at_peer(Run *r) { return S.me != r->a->peer ? nowhere() : region(S.dst, r->a->size, 1); }
static Region at_peer_last(Run *r) { return S.me != r->a->peer || r->last <= 0 ? nowhere() : region(S.dst, 1, 8); }
static Region at_both(Run *r) { return !lat_active(r) ? nowhere() : region(S.dst, r->a->size, 1); }
// A loopback ping-pong (the peer is this PE) has both flags here.
static Region at_flags(Run *r) { return !lat_active(r) ? nowhere() : region(S.flag, r->a->peer == S.me ? 2 : 1, 8); }
static Region at_chased(Run *r) { return !r->initiator ? nowhere() : region(S.dst, r->a->size, 1); }
static Region at_cursor(Run *r) { return !r->initiator ? nowhere() : region(S.cursor, 1, 8); }

static int pattern_of_initiator(Run *r, Region w, nb_result *res) {
  return check_bytes((const uint8_t *)w.p, w.n, 0, r->a->initiator, r->a->seed, res);
}
// Each side received the other's payload (loopback: the initiator's half).
static int pattern_of_other(Run *r, Region w, nb_result *res) {
  return check_bytes((const uint8_t *)w.p, w.n, 0, r->initiator ? r->a->peer : r->a->initiator, r->a->seed, res);
}
// Each side's flag reached the last launch's last value.
static int at_last_launch(Run *r, Region w, nb_result *res) { return check_u64((const uint64_t *)w.p, w.n, (uint64_t)r->last, res); }
// The last p of the last launch was delivered.
static int at_last_op(Run *r, Region w, nb_result *res) { return check_u64((const uint64_t *)w.p, w.n, (uint64_t)(r->last - 1), res); }
// r->ops hops from block 0: dst holds the block of the last hop.
static int last_hop_block(Run *r, Region w, nb_result *res) {
  return chain_check_block(lat_chain(r), (const uint8_t *)w.p, w.n, r->ops, r->a->peer, r->a->seed, res);
}
static int cursor_after_hops(Run *r, Region, nb_result *res) { return chain_check_cursor(lat_chain(r), r->ops * ops_per_iter(r), res); }
static int nothing_lands(Run *, nb_result *) { return 0; }

NB_CHECK(kCheckAtPeer, "the initiator's pattern at the peer", at_peer, pattern_of_initiator);
NB_CHECK(kCheckBothWays, "each side's pattern at the other", at_both, pattern_of_other);
NB_CHECK(kCheckFlags, "each side's flag at the last launch's last value", at_flags, at_last_launch);
NB_CHECK(kCheckLast, "the peer's word at the last operation's value", at_peer_last, at_last_op);
NB_CHECK(kCheckChased, "the chain's block of the last hop at the initiator", at_chased, last_hop_block);
NB_CHECK(kCheckCursor, "the chase's cursor where the chain says", at_cursor, cursor_after_hops);
// The empty kernel leaves nothing (T_NO_OUTPUT; the Go side records why).
static constexpr Check kCheckNothing = {"nothing: the kernel leaves no result", nothing_lands, nullptr};

static int lat_prepare(Run *r) {
  const Args *a = r->a;
  int rc;
  if (has(r, T_CHASE)) {
    if ((rc = chain_prepare(lat_chain(r), a->seed))) return rc;
  } else if ((rc = fill_src(a->size, a->seed))) {
    return rc;
  }
  if (r->e->check->reset) {  // the atomics' counter
    if ((rc = r->e->check->reset(r))) return rc;
  } else if (a->verify && !has(r, T_FLOOR) && (rc = poison_dst(has(r, T_PINGPONG) ? 2 * a->size : a->size))) {
    return rc;
  }
  CK(cudaMemsetAsync(S.flag, 0, 2 * sizeof(uint64_t), S.stream));
  CK(cudaMemsetAsync(S.cursor, 0, sizeof(int64_t), S.stream));
  return 0;
}

// A ping-pong restarts its signal values from 1 at every launch.
static int lat_before_launch(Run *r) {
  if (!has(r, T_PINGPONG)) return 0;
  CK(cudaMemsetAsync(S.flag, 0, 2 * sizeof(uint64_t), S.stream));
  CK(cudaStreamSynchronize(S.stream));
  return 0;
}

static int64_t lat_bytes(Run *r) { return r->initiator && has(r, T_PAYLOAD) ? r->a->size : 0; }

// The largest buffer one GPU serves: the chain of a chase, else the message.
static int64_t lat_work_set(Run *r) {
  if (has(r, T_CHASE)) {
    Chain c = lat_chain(r);
    return c.n * c.stride;
  }
  return r->a->size;
}

static constexpr Family kLat = {.name = "latency",
                                .validate = lat_validate,
                                .active = lat_active,
                                .synced = lat_synced,
                                .cal_iters = 10,
                                .kernel_timer = 1,
                                .prepare = lat_prepare,
                                .before_launch = lat_before_launch,
                                .bytes = lat_bytes,
                                .work_set = lat_work_set};
NB_FAMILY(kLat);
// The empty kernel keeps no in-kernel time.
static constexpr Family kLatLaunch = {.name = "launch",
                                      .validate = lat_validate,
                                      .active = lat_active,
                                      .synced = lat_synced,
                                      .cal_iters = 10,
                                      .prepare = lat_prepare,
                                      .before_launch = lat_before_launch,
                                      .bytes = lat_bytes,
                                      .work_set = lat_work_set};
NB_FAMILY(kLatLaunch);
// Ping-pongs are not calibrated: both sides run the same fixed count.
static constexpr Family kLatPP = {.name = "ping-pong",
                                  .validate = lat_validate,
                                  .active = lat_active,
                                  .synced = lat_synced,
                                  .default_iters = 1000,
                                  .kernel_timer = 1,
                                  .prepare = lat_prepare,
                                  .before_launch = lat_before_launch,
                                  .bytes = lat_bytes,
                                  .work_set = lat_work_set};
NB_FAMILY(kLatPP);

// --- launches
template <int BLOCKING>
static int launch_lat_put(Run *r, int iters) {
  const Args *a = r->a;
  dim3 b(a->threads);
  with_scope(a->scope, [&](auto sc) {
    k_lat_put<decltype(sc)::value, BLOCKING><<<1, b, 0, S.stream>>>(S.dst, S.src, a->size, iters, r->target, S.times);
  });
  CKLAUNCH("put latency kernel");
  return 0;
}

static int launch_lat_get(Run *r, int iters) {
  const Args *a = r->a;
  Chain c = lat_chain(r);
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
  Chain c = lat_chain(r);
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

static int launch_lat_put_signal(Run *r, int iters) {
  k_lat_put_signal<<<1, r->a->threads, 0, S.stream>>>(S.dst, S.src, r->a->size, S.flag, iters, r->target, S.times);
  CKLAUNCH("put-signal latency kernel");
  return 0;
}

// The floor: through this PE's own chain (chase-local) or the peer's.
static int launch_chase(Run *r, int iters) {
  Chain c = lat_chain(r);
  if (c.stride != 128) return fail(NB_ERR, "a floor's chain has 128-byte blocks, not %lld", (long long)c.stride);
  const uint8_t *chain = (const uint8_t *)nvshmem_ptr(S.src, r->target);
  if (!chain) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  k_lat_chase<<<1, 1, 0, S.stream>>>(chain, c.n, S.cursor, iters, S.times);
  CKLAUNCH("chase kernel");
  return 0;
}

static int launch_empty(Run *, int iters) {
  for (int i = 0; i < iters; i++) k_empty<<<1, 1, 0, S.stream>>>();
  CKLAUNCH("empty kernel");
  return 0;
}

static constexpr OpEntry kLatOps[] = {
    {NB_OP_LAT_PUT, "lat.put", &kLat, T_PAYLOAD | T_ROUNDTRIP, kCheckAtPeer, launch_lat_put<0>},
    {NB_OP_LAT_PUT_ISSUE, "lat.put_issue", &kLat, T_PAYLOAD, kCheckAtPeer, launch_lat_put<1>},
    {NB_OP_LAT_GET, "lat.get", &kLat, T_PAYLOAD | T_ROUNDTRIP | T_CHASE, kCheckChased, launch_lat_get},
    {NB_OP_LAT_P, "lat.p", &kLat, T_PAYLOAD | T_ROUNDTRIP, kCheckAtPeer, launch_lat_p},
    {NB_OP_LAT_G, "lat.g", &kLat, T_PAYLOAD | T_ROUNDTRIP | T_CHASE, kCheckChased, launch_lat_g},
    {NB_OP_PP_PUT_SIGNAL, "lat.pp_put_signal", &kLatPP, T_PAYLOAD | T_ROUNDTRIP | T_PINGPONG, kCheckBothWays, launch_pingpong<NB_OP_PP_PUT_SIGNAL>},
    {NB_OP_PP_P, "lat.pp_p", &kLatPP, T_PAYLOAD | T_ROUNDTRIP | T_PINGPONG, kCheckBothWays, launch_pingpong<NB_OP_PP_P>},
    {NB_OP_PP_ATOMIC, "lat.pp_atomic", &kLatPP, T_ROUNDTRIP | T_PINGPONG, kCheckFlags, launch_pingpong<NB_OP_PP_ATOMIC>},
    {NB_OP_PP_SIGNAL, "lat.pp_signal", &kLatPP, T_ROUNDTRIP | T_PINGPONG, kCheckFlags, launch_pingpong<NB_OP_PP_SIGNAL>},
    {NB_OP_PP_SIGNAL_SPIN, "lat.pp_signal_spin", &kLatPP, T_ROUNDTRIP | T_PINGPONG, kCheckFlags, launch_pingpong<NB_OP_PP_SIGNAL_SPIN>},
    {NB_OP_LAT_FENCE, "lat.fence", &kLat, 0, kCheckLast, launch_order<NB_OP_LAT_FENCE>},
    {NB_OP_LAT_QUIET, "lat.quiet", &kLat, T_ROUNDTRIP, kCheckLast, launch_order<NB_OP_LAT_QUIET>},
    {NB_OP_LAT_PUT_SIGNAL, "lat.put_signal", &kLat, T_PAYLOAD | T_ROUNDTRIP, kCheckAtPeer, launch_lat_put_signal},
    {NB_OP_LAT_LAUNCH, "lat.launch", &kLatLaunch, T_NO_OUTPUT, kCheckNothing, launch_empty},
    {NB_OP_LAT_CHASE, "lat.chase", &kLat, T_FLOOR | T_LOADSTORE | T_CHASE, kCheckCursor, launch_chase},
};
NB_CHECKED(kLatOps);
