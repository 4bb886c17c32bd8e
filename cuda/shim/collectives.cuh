// collectives.cuh: the collectives family and its entries in the dispatch
// table: AllReduce (NVSHMEM device thread/warp/block in one CTA, NVSHMEM
// on-stream, our multi-CTA one-shot and two-shot over symmetric memory, NCCL
// host, NCCL's device API), broadcast, alltoall, allgather and barrier
// (NVSHMEM device and on-stream, NCCL), each a Coll<OP> (how every library
// issues it) and a table entry (what its output must hold). Included by
// nvshbench.cu. Every PE runs every launch; all start each launch together.
//
// Launch modes: the host APIs (NVSHMEM on-stream, NCCL) make one launch per
// operation; the device implementations run either the same way, one kernel
// per operation (args.per_op), or with the iterations fused in one kernel.
// Only rows of one mode are compared with each other.

// The family's operation codes (private; see rma.cuh).
enum { NB_OP_ALLREDUCE = 41, NB_OP_BROADCAST = 42, NB_OP_ALLTOALL = 43, NB_OP_BARRIER = 44, NB_OP_ALLGATHER = 45 };

// --- NVSHMEM device collectives in one CTA (collective launch)
template <typename T> __device__ static inline void red_thread(T *d, const T *s, size_t n);
template <> __device__ inline void red_thread<float>(float *d, const float *s, size_t n) { nvshmem_float_sum_reduce(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_thread<__half>(__half *d, const __half *s, size_t n) { nvshmem_half_sum_reduce(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_thread<__nv_bfloat16>(__nv_bfloat16 *d, const __nv_bfloat16 *s, size_t n) { nvshmem_bfloat16_sum_reduce(NVSHMEM_TEAM_WORLD, d, s, n); }
template <typename T> __device__ static inline void red_warp(T *d, const T *s, size_t n);
template <> __device__ inline void red_warp<float>(float *d, const float *s, size_t n) { nvshmemx_float_sum_reduce_warp(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_warp<__half>(__half *d, const __half *s, size_t n) { nvshmemx_half_sum_reduce_warp(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_warp<__nv_bfloat16>(__nv_bfloat16 *d, const __nv_bfloat16 *s, size_t n) { nvshmemx_bfloat16_sum_reduce_warp(NVSHMEM_TEAM_WORLD, d, s, n); }
template <typename T> __device__ static inline void red_block(T *d, const T *s, size_t n);
template <> __device__ inline void red_block<float>(float *d, const float *s, size_t n) { nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_block<__half>(__half *d, const __half *s, size_t n) { nvshmemx_half_sum_reduce_block(NVSHMEM_TEAM_WORLD, d, s, n); }
template <> __device__ inline void red_block<__nv_bfloat16>(__nv_bfloat16 *d, const __nv_bfloat16 *s, size_t n) { nvshmemx_bfloat16_sum_reduce_block(NVSHMEM_TEAM_WORLD, d, s, n); }

template <typename T, int SCOPE>
__global__ void k_dev_allreduce(T *dst, const T *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if constexpr (SCOPE == NB_SCOPE_BLOCK) red_block<T>(dst, src, n);
    else if constexpr (SCOPE == NB_SCOPE_WARP) { if (threadIdx.x < 32) red_warp<T>(dst, src, n); }
    else { if (threadIdx.x == 0) red_thread<T>(dst, src, n); }
    __syncthreads();
  }
  stamp_end0(st);
}

__global__ void k_dev_broadcast(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_broadcast_block(NVSHMEM_TEAM_WORLD, dst, src, n, 0);
    __syncthreads();
  }
  stamp_end0(st);
}

__global__ void k_dev_alltoall(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_alltoall_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
  stamp_end0(st);
}

// n: elements each PE contributes (its block of the output).
__global__ void k_dev_allgather(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_fcollect_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
  stamp_end0(st);
}

// The same arguments as the other device collectives (one launch path).
__global__ void k_dev_barrier(float *, const float *, size_t, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_barrier_all_block();
  }
  stamp_end0(st);
}

// One collective, in the style of nccl-tests' testColl: how each library
// issues it once. n is the elements of args.size (per PE; with blocks, of
// the whole output). A new collective is a specialisation here, its
// one-CTA kernel above, its code in the enum and one table entry below;
// the family's validate, prepare, check and bytes serve it from the
// entry's `lands`.
template <int OP> struct Coll;

template <> struct Coll<NB_OP_ALLREDUCE> {
  static const void *device(const Args *a) {
    const void *fn = nullptr;
    with_dtype(a->dtype, [&](auto t) {
      using T = decltype(t);
      with_scope(a->scope, [&](auto sc) { fn = (const void *)k_dev_allreduce<T, decltype(sc)::value>; });
    });
    return fn;
  }
  static int stream(const Args *a, int64_t n, cudaStream_t s) {
    if (a->dtype == NB_DT_BF16) return nvshmemx_bfloat16_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (__nv_bfloat16 *)S.dst, (const __nv_bfloat16 *)S.src, n, s);
    if (a->dtype == NB_DT_F16) return nvshmemx_half_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (__half *)S.dst, (const __half *)S.src, n, s);
    return nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, n, s);
  }
  static ncclResult_t nccl(const Args *a, int64_t n, ncclComm_t c, cudaStream_t s) {
    return g_nccl.allReduce(S.src, S.dst, n, nccl_type(a->dtype), ncclSum, c, s);
  }
};

template <> struct Coll<NB_OP_BROADCAST> {
  static const void *device(const Args *) { return (const void *)k_dev_broadcast; }
  static int stream(const Args *, int64_t n, cudaStream_t s) {
    return nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, n, 0, s);
  }
  static ncclResult_t nccl(const Args *, int64_t n, ncclComm_t c, cudaStream_t s) { return g_nccl.broadcast(S.src, S.dst, n, ncclFloat32, 0, c, s); }
};

template <> struct Coll<NB_OP_ALLTOALL> {
  static const void *device(const Args *) { return (const void *)k_dev_alltoall; }
  static int stream(const Args *, int64_t n, cudaStream_t s) {
    return nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, n / S.npes, s);
  }
  // NCCL has no alltoall: grouped send/recv, as nccl-tests does.
  static ncclResult_t nccl(const Args *, int64_t n, ncclComm_t c, cudaStream_t s) {
    int64_t blk = n / S.npes;
    ncclResult_t r = g_nccl.groupStart();
    for (int q = 0; q < S.npes && r == ncclSuccess; q++) {
      r = g_nccl.send((float *)S.src + q * blk, blk, ncclFloat32, q, c, s);
      if (r == ncclSuccess) r = g_nccl.recv((float *)S.dst + q * blk, blk, ncclFloat32, q, c, s);
    }
    ncclResult_t e = g_nccl.groupEnd();
    return r != ncclSuccess ? r : e;
  }
};

template <> struct Coll<NB_OP_ALLGATHER> {
  static const void *device(const Args *) { return (const void *)k_dev_allgather; }
  static int stream(const Args *, int64_t n, cudaStream_t s) {
    return nvshmemx_float_fcollect_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, n / S.npes, s);
  }
  static ncclResult_t nccl(const Args *, int64_t n, ncclComm_t c, cudaStream_t s) { return g_nccl.allGather(S.src, S.dst, n / S.npes, ncclFloat32, c, s); }
};

template <> struct Coll<NB_OP_BARRIER> {
  static const void *device(const Args *) { return (const void *)k_dev_barrier; }
  static int stream(const Args *, int64_t, cudaStream_t s) {
    nvshmemx_barrier_all_on_stream(s);
    return 0;
  }
  // NCCL has no barrier: a 1-element AllReduce.
  static ncclResult_t nccl(const Args *, int64_t, ncclComm_t c, cudaStream_t s) { return g_nccl.allReduce(S.src, S.dst, 1, ncclFloat32, ncclSum, c, s); }
};

static int coll_blocks(const Run *r) { return has(r, T_BLOCKS); }

// Our multi-CTA AllReduce through NVSHMEM (allreduce.cuh): iters operations
// in one kernel, stamped at times (common.cuh: stamp).
static int our_allreduce(Run *r, int64_t n, int iters, int64_t *times) {
  const Args *a = r->a;
  NvshmemPeers peers;
  peers.me = S.me, peers.npes = S.npes;
  for (int q = 0; q < S.npes; q++) {
    peers.src.p[q] = (const float *)nvshmem_ptr(S.src, q);
    peers.scratch.p[q] = (const float *)nvshmem_ptr(S.scratch, q);
    if (!peers.src.p[q] || !peers.scratch.p[q]) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store: our AllReduce needs P2P to every PE", q);
  }
  NvshmemBarrier bar{S.cflags, S.epochs, S.me, S.npes};
  with_flag(a->impl == NB_IMPL_OUR_TWOSHOT, [&](auto two) {
    auto k = k_multicta<NvshmemPeers, NvshmemBarrier, decltype(two)::value>;
    launched(r, k, a->ctas, a->threads);
    k<<<a->ctas, a->threads, 0, S.stream>>>((float *)S.dst, peers, bar, n, iters, times);
  });
  CKLAUNCH("our allreduce");
  return 0;
}

// iters operations of collective OP on S.stream, by args.impl: a device
// implementation fused in one kernel, or (per_op, and every host API) one
// launch per operation. The device implementations stamp (common.cuh):
// a fused loop its groups of iterations, launch l of a per-operation run
// at S.times + l.
template <int OP>
static int coll_launch(Run *r, int iters) {
  using C = Coll<OP>;
  const Args *a = r->a;
  int64_t n = a->size / esize(a->dtype);  // elements (per PE; with blocks, of the whole output)
  cudaStream_t s = S.stream;
  int launches = a->per_op ? iters : 1, each = a->per_op ? 1 : iters;
  switch (a->impl) {
  case NB_IMPL_NVSHMEM_DEVICE: {
    size_t nn = (size_t)(coll_blocks(r) ? n / S.npes : n);  // NVSHMEM counts per PE
    int it = each;
    void *dst = S.dst, *src = S.src;
    int64_t *st = S.times;
    void *args[] = {&dst, &src, &nn, &it, &st};
    r->resident = 1;
    r->stamped = 1;  // one CTA
    for (int l = 0; l < launches; l++) {
      if (a->per_op) st = S.times + l;
      int rc = nvshmemx_collective_launch(C::device(a), dim3(1), dim3(a->threads), args, 0, s);
      if (rc != 0) return fail(NB_ERR, "nvshmemx_collective_launch: %d", rc);
      CKLAUNCH("device collective");
    }
    return 0;
  }
  case NB_IMPL_OUR_ONESHOT:
  case NB_IMPL_OUR_TWOSHOT:  // AllReduce only (validated)
    for (int l = 0; l < launches; l++)
      if (int rc = our_allreduce(r, n, each, a->per_op ? S.times + l : S.times)) return rc;
    return 0;
  case NB_IMPL_LSA_ONESHOT:
  case NB_IMPL_LSA_TWOSHOT:  // AllReduce only (validated)
    for (int l = 0; l < launches; l++)
      if (int rc = nd_coll_launch(r, each, a->per_op ? S.times + l : S.times)) return rc;
    return 0;
  case NB_IMPL_NVSHMEM_STREAM:
    for (int i = 0; i < iters; i++)
      if (int rc = C::stream(a, n, s)) return fail(NB_ERR, "NVSHMEM on-stream %s: %d", r->e->name, rc);
    return 0;
  case NB_IMPL_NCCL: {
    char key[64];
    comm_key(a, key, sizeof key);
    CommEntry *ce = comm_find(key);
    if (!ce || ce->failed[0]) return fail(NB_ERR, "no NCCL communicator %s", key);
    for (int i = 0; i < iters; i++) NCK(C::nccl(a, n, ce->comm, s));
    return 0;
  }
  }
  return fail(NB_ERR, "unknown implementation %d", a->impl);
}

// ---------------------------------------------------------------------------
static int coll_device_impl(int impl) { return impl != NB_IMPL_NVSHMEM_STREAM && impl != NB_IMPL_NCCL; }

static int coll_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = 1;  // every PE runs and times (PE 0's samples are reported)
  r->target = -1;
  int es = esize(a->dtype);
  if (has(r, T_PAYLOAD) && (a->size <= 0 || a->size > S.buf || a->size % es))
    return fail(NB_ERR, "size %lld: 1..%lld and a multiple of %d", (long long)a->size, (long long)S.buf, es);
  if (coll_blocks(r) && (a->size / es) % S.npes)
    return fail(NB_UNREACHABLE, "%s: %lld elements do not divide by %d PEs", r->e->name, (long long)(a->size / es), S.npes);
  if (a->threads <= 0 || a->threads > 1024 || a->ctas <= 0 || a->ctas > NB_MAX_CTAS) return fail(NB_ERR, "launch %d x %d invalid", a->ctas, a->threads);
  if (a->impl < NB_IMPL_NVSHMEM_DEVICE || a->impl > NB_IMPL_LSA_TWOSHOT) return fail(NB_ERR, "unknown implementation %d", a->impl);
  if (!a->per_op && !coll_device_impl(a->impl)) return fail(NB_ERR, "a host API makes one launch per operation: no fused form");
  if (a->op != NB_OP_ALLREDUCE && a->dtype != NB_DT_F32) return fail(NB_ERR, "%s: float only", r->e->name);
  if (a->impl == NB_IMPL_LSA_ONESHOT || a->impl == NB_IMPL_LSA_TWOSHOT) {
    if (a->op != NB_OP_ALLREDUCE || a->dtype != NB_DT_F32) return fail(NB_ERR, "the NCCL device API AllReduce does float sums only");
    if (int st = nd_headers()) return st;
    return nd_state();
  }
  if (a->impl == NB_IMPL_OUR_ONESHOT || a->impl == NB_IMPL_OUR_TWOSHOT) {
    if (a->op != NB_OP_ALLREDUCE || a->dtype != NB_DT_F32) return fail(NB_ERR, "our multi-CTA kernels do float AllReduce only");
    for (int q = 0; q < S.npes; q++)
      if (!nvshmem_ptr(S.src, q)) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d: our AllReduce needs P2P to every PE", q, S.me);
  }
  if (a->impl == NB_IMPL_NCCL) {
    if (!g_nccl.h) return fail(NB_UNREACHABLE, "%s", g_nccl.why);
    char key[64];
    comm_key(a, key, sizeof key);
    CommEntry *ce = comm_find(key);
    if (ce && ce->failed[0]) return fail(NB_ERR, "the NCCL communicator (%s) could not be made earlier in this run: %s", key, ce->failed);
  }
  return 0;
}

static int coll_active(Run *) { return 1; }
static int coll_synced(Run *) { return 1; }

static int coll_prepare(Run *r) {
  const Args *a = r->a;
  if (!has(r, T_PAYLOAD)) {  // the barrier
    k_zero_u64<<<1, 64, 0, S.stream>>>((uint64_t *)S.scratch, S.npes);  // the barrier check's words
    CKLAUNCH("barrier words");
    return 0;
  }
  int64_t n = a->size / esize(a->dtype);
  int blocks = a->op == NB_OP_ALLTOALL;  // a source block per destination PE
  int64_t block = coll_blocks(r) ? n / S.npes : n;
  with_dtype(a->dtype, [&](auto t) {
    using T = decltype(t);
    k_cfill<T><<<1024, 256, 0, S.stream>>>((T *)S.src, n, S.me, a->seed, blocks, block);
  });
  CKLAUNCH("collective fill");
  if (a->verify) return poison_dst(a->size);
  return 0;
}

static int nccl_setup(Run *r) {
  char key[64];
  comm_key(r->a, key, sizeof key);
  return comm_make(key, r->a->nccl_algo, r->a->nccl_proto);
}

static int coll_setup(Run *r) {
  if (r->a->impl == NB_IMPL_NCCL) return nccl_setup(r);
  if (r->a->impl == NB_IMPL_LSA_ONESHOT || r->a->impl == NB_IMPL_LSA_TWOSHOT) return nd_coll_setup(r);
  return 0;
}

// The barrier's check, collective (every PE makes every call, whatever it
// finds): rounds of "every PE writes the round into its word at every PE,
// the barrier under test, every PE reads every word, the barrier again". A
// barrier that lets a PE through before the others arrived shows as a word
// still at the previous round.
__global__ void k_bar_put(uint64_t *words, int me, int npes, uint64_t round) {
  for (int q = 0; q < npes; q++) nvshmem_uint64_p(words + me, round, q);
  nvshmem_quiet();
}

__global__ void k_bar_check(const uint64_t *words, int npes, uint64_t round, unsigned long long *cnt) {
  for (int q = threadIdx.x; q < npes; q += blockDim.x)
    if (((volatile const uint64_t *)words)[q] != round) mismatch(cnt, q);
}

enum { BARRIER_ROUNDS = 8 };

// The barrier's corrupt: the check's rounds write the words it reads, so
// the damage waits for its first round (this PE's own word, after the
// barrier under test: what a barrier that let a write pass would leave).
static int g_bar_corrupt;
static int coll_corrupt_barrier(Run *) {
  g_bar_corrupt = 1;
  return 0;
}

static int coll_check_barrier(Run *r, nb_result *res) {
  uint64_t *words = (uint64_t *)S.scratch;
  int st = 0;
  for (uint64_t round = 1; round <= BARRIER_ROUNDS; round++) {
    k_bar_put<<<1, 1, 0, S.stream>>>(words, S.me, S.npes, round);
    if (!st && cudaGetLastError() != cudaSuccess) st = fail(NB_ERR, "barrier check: put kernel");
    int rc = r->e->launch(r, 1);
    if (!st) st = rc;
    if (g_bar_corrupt && !st) st = corrupt_region(region(words + S.me, 1, 8));
    g_bar_corrupt = 0;
    if (!st)
      st = counted(S.npes, res, [&](unsigned long long *cnt) { k_bar_check<<<1, 64, 0, S.stream>>>(words, S.npes, round, cnt); },
                   [&](unsigned long long first, unsigned long long) {
                     snprintf(res->detail, sizeof res->detail, "after barrier round %llu, PE %llu's word was not yet written", (unsigned long long)round, first);
                   });
    rc = r->e->launch(r, 1);
    if (!st) st = rc;
  }
  cudaError_t e = cudaStreamSynchronize(S.stream);
  if (!st && e != cudaSuccess) st = fail(NB_ERR, "barrier check: %s", cudaGetErrorString(e));
  return st;
}

template <int KIND>
static int coll_verify(Run *r, Region w, nb_result *res) {
  const Args *a = r->a;
  int64_t n = w.n;
  int64_t block = coll_blocks(r) ? n / S.npes : n;
  return counted(
      n, res,
      [&](unsigned long long *cnt) {
        with_dtype(a->dtype, [&](auto t) {
          using T = decltype(t);
          k_ccheck<T><<<1024, 256, 0, S.stream>>>((const T *)w.p, n, S.me, S.npes, a->seed, KIND, block, cnt);
        });
      },
      [&](unsigned long long first, unsigned long long wrong) {
        snprintf(res->detail, sizeof res->detail, "element %llu wrong (%llu of %lld)", first, wrong, (long long)n);
      });
}
// Every PE's output: size bytes of elements of the point's dtype.
static Region coll_output(Run *r) { return region(S.dst, r->a->size / esize(r->a->dtype), esize(r->a->dtype)); }
NB_CHECK(kCheckSum, "the sum over PEs of every element", coll_output, coll_verify<COLL_SUM>);
NB_CHECK(kCheckRoot, "the root's source at every PE", coll_output, coll_verify<COLL_ROOT>);
NB_CHECK(kCheckBlocks, "block p from PE p at every PE", coll_output, coll_verify<COLL_BLOCKS>);
NB_CHECK(kCheckGathered, "PE p's source as block p at every PE", coll_output, coll_verify<COLL_GATHERED>);
static constexpr Check kCheckBarrier = {"every PE's writes seen by every PE after the barrier", coll_check_barrier,
                                        coll_corrupt_barrier};

static int64_t coll_bytes(Run *r) { return has(r, T_PAYLOAD) ? r->a->size : 0; }

// The largest buffer one GPU serves: each PE's source (a one-shot reads every
// peer's) and destination are size bytes.
static int64_t coll_work_set(Run *r) { return has(r, T_PAYLOAD) ? r->a->size : 0; }

// A per-operation collective makes a launch per operation; a fused one loops.
static int coll_per_op_launches(Run *r) { return r->a->per_op; }

static const Family kColl = {"collectives", coll_validate, coll_active, coll_synced, 2, 0, 0, coll_prepare,
                             coll_setup, nullptr, coll_bytes, coll_work_set, coll_per_op_launches};

static constexpr OpEntry kCollOps[] = {
    {NB_OP_ALLREDUCE, "coll.allreduce", &kColl, T_PAYLOAD, kCheckSum, coll_launch<NB_OP_ALLREDUCE>},
    {NB_OP_BROADCAST, "coll.broadcast", &kColl, T_PAYLOAD, kCheckRoot, coll_launch<NB_OP_BROADCAST>},
    {NB_OP_ALLTOALL, "coll.alltoall", &kColl, T_PAYLOAD | T_BLOCKS, kCheckBlocks, coll_launch<NB_OP_ALLTOALL>},
    {NB_OP_ALLGATHER, "coll.allgather", &kColl, T_PAYLOAD | T_BLOCKS, kCheckGathered, coll_launch<NB_OP_ALLGATHER>},
    {NB_OP_BARRIER, "coll.barrier", &kColl, 0, kCheckBarrier, coll_launch<NB_OP_BARRIER>},
};
NB_CHECKED(kCollOps);
