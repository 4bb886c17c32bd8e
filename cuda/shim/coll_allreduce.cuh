// coll_allreduce.cuh: AllReduce (sum): NVSHMEM device-side in one CTA at
// thread, warp and block scope, NVSHMEM on-stream, NCCL, and our own
// kernels: the multi-CTA one-shot and two-shot over symmetric memory
// (allreduce.cuh), through NVSHMEM or NCCL's device API. A collective of
// collectives.cuh (its interface there).

enum { NB_OP_ALLREDUCE = 41 };

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

using NcclAllReduceFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);

struct AllReduce {
  static constexpr bool blocks = false;  // every PE's count is the size
  static constexpr bool all_dtypes = true;

  // Every PE's source is cval of its rank; the output is their sum.
  __host__ __device__ static float source(int64_t i, int pe, CollShape g) { return cval(i, pe, g.seed); }
  __host__ __device__ static float want(int64_t i, int, CollShape g) {
    float v = 0;
    for (int p = 0; p < g.npes; p++) v += source(i, p, g);
    return v;
  }

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
  static inline NcclFn<NcclAllReduceFn> all_reduce{"ncclAllReduce"};
  static ncclResult_t nccl(const Args *a, int64_t n, ncclComm_t c, cudaStream_t s) {
    return all_reduce.call(S.src, S.dst, n, nccl_type(a->dtype), ncclSum, c, s);
  }

  // Our kernels: float sums, through NVSHMEM (every peer mapped) or NCCL's
  // device API (its objects made, the source in its window).
  static int multi_validate(Run *r) {
    const Args *a = r->a;
    if (a->impl == NB_IMPL_LSA_ONESHOT || a->impl == NB_IMPL_LSA_TWOSHOT) {
      if (a->dtype != NB_DT_F32) return fail(NB_ERR, "the NCCL device API AllReduce does float sums only");
      if (int st = nd_headers()) return st;
      return nd_state();
    }
    if (a->dtype != NB_DT_F32) return fail(NB_ERR, "our multi-CTA kernels do float AllReduce only");
    for (int q = 0; q < S.npes; q++)
      if (!nvshmem_ptr(S.src, q)) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d: our AllReduce needs P2P to every PE", q, S.me);
    return 0;
  }
  static int multi_setup(Run *r) {
    if (r->a->impl == NB_IMPL_LSA_ONESHOT || r->a->impl == NB_IMPL_LSA_TWOSHOT)
      return nd_coll_setup(r, coll_fill<AllReduce>, "an LSA AllReduce needs load/store access to every rank", false);  // its output, S.dst, poisoned at prepare
    return 0;
  }
  static int multi(Run *r, int64_t n, int iters, int64_t *times) {
    if (r->a->impl == NB_IMPL_LSA_ONESHOT || r->a->impl == NB_IMPL_LSA_TWOSHOT) return nd_coll_launch(r, iters, times);
    return our_allreduce(r, n, iters, times);
  }
};

NB_CHECK(kCheckSum, "the sum over PEs of every element", coll_output, coll_verify<AllReduce>);
static constexpr OpEntry kAllReduce = {NB_OP_ALLREDUCE, "coll.allreduce", &kColl, T_PAYLOAD, kCheckSum, coll_launch<AllReduce>};
