// coll_reducescatter.cuh: reduce-scatter (sum): every PE's source reduced,
// block p of the sum left at PE p. As in nccl-tests, the size is the whole
// input: each PE receives size / PEs. NVSHMEM device-side in one CTA at
// thread, warp and block scope, NVSHMEM on-stream, NCCL. Float sums. A
// collective of collectives.cuh (its interface there).

enum { NB_OP_REDUCESCATTER = 46 };

template <int SCOPE>
__global__ void k_dev_reducescatter(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if constexpr (SCOPE == NB_SCOPE_BLOCK) nvshmemx_float_sum_reducescatter_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    else if constexpr (SCOPE == NB_SCOPE_WARP) { if (threadIdx.x < 32) nvshmemx_float_sum_reducescatter_warp(NVSHMEM_TEAM_WORLD, dst, src, n); }
    else { if (threadIdx.x == 0) nvshmem_float_sum_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, n); }
    __syncthreads();
  }
  stamp_end0(st);
}

using NcclReduceScatterFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);

struct ReduceScatter {
  static constexpr bool blocks = true;  // the count is the block each PE receives
  static constexpr bool all_dtypes = false;

  // Every PE's source is cval of its rank; PE me's output is block me of their sum.
  __host__ __device__ static float source(int64_t i, int pe, CollShape g) { return cval(i, pe, g.seed); }
  __host__ __device__ static float want(int64_t i, int me, CollShape g) {
    float v = 0;
    for (int p = 0; p < g.npes; p++) v += source(me * g.block + i, p, g);
    return v;
  }

  static const void *device(const Args *a) {
    const void *fn = nullptr;
    with_scope(a->scope, [&](auto sc) { fn = (const void *)k_dev_reducescatter<decltype(sc)::value>; });
    return fn;
  }
  static int stream(const Args *, int64_t count, cudaStream_t s) {
    return nvshmemx_float_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, count, s);
  }
  static inline NcclFn<NcclReduceScatterFn> reduce_scatter{"ncclReduceScatter"};
  static ncclResult_t nccl(const Args *, int64_t count, ncclComm_t c, cudaStream_t s) {
    return reduce_scatter.call(S.src, S.dst, count, ncclFloat32, ncclSum, c, s);
  }

  // What each PE checks: its block of the sum (size / PEs of the output).
  static Region output(Run *r) { return region(S.dst, coll_elems(r->a) / S.npes, esize(r->a->dtype)); }
};

NB_CHECK(kCheckScattered, "block p of the sum over PEs at PE p", ReduceScatter::output, coll_verify<ReduceScatter>);
static constexpr OpEntry kReduceScatter = {NB_OP_REDUCESCATTER, "coll.reducescatter", &kColl, T_PAYLOAD | T_BLOCKS, kCheckScattered,
                                           coll_launch<ReduceScatter>};
