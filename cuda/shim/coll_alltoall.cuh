// coll_alltoall.cuh: all-to-all: block q of PE p's source lands as block p
// of PE q's output. The size is the whole output: size / PEs to each PE.
// A collective of collectives.cuh (its interface there).

enum { NB_OP_ALLTOALL = 43 };

__global__ void k_dev_alltoall(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_alltoall_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
  stamp_end0(st);
}

struct AllToAll {
  static constexpr bool blocks = true;  // size / PEs to each PE
  static constexpr bool all_dtypes = false;

  // Block q of PE p's source (destined to PE q) is cval of p*31 + q*7.
  __host__ __device__ static float source(int64_t i, int pe, CollShape g) {
    return cval(i % g.block, pe * 31 + (int)(i / g.block) * 7, g.seed);
  }
  // Block p of PE me's output is block me of PE p's source.
  __host__ __device__ static float want(int64_t i, int me, CollShape g) {
    return source(me * g.block + i % g.block, (int)(i / g.block), g);
  }

  static const void *device(const Args *) { return (const void *)k_dev_alltoall; }
  static int stream(const Args *, int64_t count, cudaStream_t s) {
    return nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, count, s);
  }
  // NCCL's copy-engine path (newer_nccl.cuh): ncclAlltoAll (2.28+), count
  // = the block to each peer.
  static constexpr const char *nccl_ce = "ncclAlltoAllConfig";
  // NCCL has no alltoall: grouped send/recv, as nccl-tests does (NCCL's
  // point-to-point calls, which nccl.cuh loads for MoE too).
  static ncclResult_t nccl(const Args *, int64_t count, ncclComm_t c, cudaStream_t s) {
    ncclResult_t r = g_nccl.groupStart();
    for (int q = 0; q < S.npes && r == ncclSuccess; q++) {
      r = g_nccl.send((float *)S.src + q * count, count, ncclFloat32, q, c, s);
      if (r == ncclSuccess) r = g_nccl.recv((float *)S.dst + q * count, count, ncclFloat32, q, c, s);
    }
    ncclResult_t e = g_nccl.groupEnd();
    return r != ncclSuccess ? r : e;
  }
};

NB_CHECK(kCheckBlocks, "block p from PE p at every PE", coll_output, coll_verify<AllToAll>);
static constexpr OpEntry kAllToAll = {NB_OP_ALLTOALL, "coll.alltoall", &kColl, T_PAYLOAD | T_BLOCKS, kCheckBlocks, coll_launch<AllToAll>};
