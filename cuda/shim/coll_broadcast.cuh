// coll_broadcast.cuh: broadcast from PE 0 to every PE. A collective of
// collectives.cuh (its interface there).

enum { NB_OP_BROADCAST = 42 };

__global__ void k_dev_broadcast(float *dst, const float *src, size_t n, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_broadcast_block(NVSHMEM_TEAM_WORLD, dst, src, n, 0);
    __syncthreads();
  }
  stamp_end0(st);
}

using NcclBroadcastFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);

struct Broadcast {
  static constexpr bool blocks = false;  // every PE's count is the size
  static constexpr bool all_dtypes = false;

  // The output at every PE is the root's (PE 0's) source.
  __host__ __device__ static float source(int64_t i, int pe, CollShape g) { return cval(i, pe, g.seed); }
  __host__ __device__ static float want(int64_t i, int, CollShape g) { return source(i, 0, g); }

  static const void *device(const Args *) { return (const void *)k_dev_broadcast; }
  static int stream(const Args *, int64_t count, cudaStream_t s) {
    return nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, (float *)S.dst, (const float *)S.src, count, 0, s);
  }
  static inline NcclFn<NcclBroadcastFn> broadcast{"ncclBroadcast"};
  static ncclResult_t nccl(const Args *, int64_t count, ncclComm_t c, cudaStream_t s) {
    return broadcast.call(S.src, S.dst, count, ncclFloat32, 0, c, s);
  }
};

NB_CHECK(kCheckRoot, "the root's source at every PE", coll_output, coll_verify<Broadcast>);
static constexpr OpEntry kBroadcast = {NB_OP_BROADCAST, "coll.broadcast", &kColl, T_PAYLOAD, kCheckRoot, coll_launch<Broadcast>};
