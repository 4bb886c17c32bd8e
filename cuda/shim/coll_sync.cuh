// coll_sync.cuh: nvshmem_sync_all beside the barrier (no payload: a
// latency), by one thread (nvshmem_sync_all), a warp (nvshmemx_sync_all_warp)
// or a block (nvshmemx_sync_all_block) of one CTA, and on a stream
// (nvshmemx_sync_all_on_stream). A sync is a barrier without the quiet:
// it waits for every PE to arrive but completes none of their memory
// operations, so what it costs against the barrier is that quiet. Its
// check is the barrier's (coll_barrier.cuh): each round's writes are
// quieted by their own kernel before the sync under test, so a sync that
// lets a PE through before every PE arrived shows as a word still at the
// previous round. A collective of collectives.cuh (its interface there).

enum { NB_OP_SYNC = 130 };

template <int SCOPE>
__global__ void k_dev_sync(float *, const float *, size_t, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if constexpr (SCOPE == NB_SCOPE_BLOCK) nvshmemx_sync_all_block();
    else if constexpr (SCOPE == NB_SCOPE_WARP) { if (threadIdx.x < 32) nvshmemx_sync_all_warp(); }
    else { if (threadIdx.x == 0) nvshmem_sync_all(); }
    __syncthreads();
  }
  stamp_end0(st);
}

struct Sync {
  static constexpr bool blocks = false;  // no payload
  static constexpr bool all_dtypes = false;

  static int prepare(Run *r) { return Barrier::prepare(r); }  // the check's words

  static const void *device(const Args *a) {
    const void *fn = nullptr;
    with_scope(a->scope, [&](auto sc) { fn = (const void *)k_dev_sync<decltype(sc)::value>; });
    return fn;
  }
  static int stream(const Args *, int64_t, cudaStream_t s) {
    nvshmemx_sync_all_on_stream(s);
    return 0;
  }
  // NCCL has no sync: the barrier's 1-element AllReduce (no row of the
  // suite runs it: collectives/barrier/nccl is that row).
  static ncclResult_t nccl(const Args *a, int64_t n, ncclComm_t c, cudaStream_t s) { return Barrier::nccl(a, n, c, s); }
};

static constexpr Check kCheckSync = {"every PE's writes, quieted before it, seen by every PE after the sync", coll_check_barrier,
                                     coll_corrupt_barrier};
static constexpr OpEntry kSync = {NB_OP_SYNC, "coll.sync", &kColl, 0, kCheckSync, coll_launch<Sync>};
