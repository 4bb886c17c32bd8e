// coll_allgather.cuh: allgather: every PE's block gathered at every PE, in
// PE order (NVSHMEM's fcollect). As in nccl-tests, the size is the whole
// output: size / PEs from each. A collective of collectives.cuh (its
// interface there).

enum { NB_OP_ALLGATHER = 45 };

// n: elements each PE contributes (its block of the output).
__global__ void k_dev_allgather(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_fcollect_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
  stamp_end0(st);
}

using NcclAllGatherFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);

struct AllGather {
  static constexpr bool blocks = true;  // each PE sends its first size / PEs
  static constexpr bool all_dtypes = false;

  // Block p of the output is the head of PE p's source.
  __host__ __device__ static float source(int64_t i, int pe, CollShape g) { return cval(i, pe, g.seed); }
  __host__ __device__ static float want(int64_t i, int, CollShape g) { return source(i % g.block, (int)(i / g.block), g); }

  static const void *device(const Args *) { return (const void *)k_dev_allgather; }
  static int stream(const Args *, int64_t count, cudaStream_t s) {
    return nvshmemx_float_fcollect_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, count, s);
  }
  static inline NcclFn<NcclAllGatherFn> all_gather{"ncclAllGather"};
  // NCCL's copy-engine path (newer_nccl.cuh): sendcount = the block.
  static constexpr const char *nccl_ce = "ncclAllGatherConfig";
  static ncclResult_t nccl(const Args *, int64_t count, ncclComm_t c, cudaStream_t s) {
    return all_gather.call(S.src, S.dst, count, ncclFloat32, c, s);
  }
};

NB_CHECK(kCheckGathered, "PE p's source as block p at every PE", coll_output, coll_verify<AllGather>);
static constexpr OpEntry kAllGather = {NB_OP_ALLGATHER, "coll.allgather", &kColl, T_PAYLOAD | T_BLOCKS, kCheckGathered, coll_launch<AllGather>};
