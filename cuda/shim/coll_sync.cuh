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

// The kernel of a sync, this file's and coll_teamsync.cuh's: iters syncs
// by one thread, a warp or a block (SCOPE) of one CTA, each the call of
// Calls for that scope (block(), warp(), thread()); Calls is made before
// the first stamp, so what it loads is not timed.
template <typename Calls, int SCOPE>
__global__ void k_dev_sync(float *, const float *, size_t, int iters, int64_t *st) {
  const Calls c{};
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if constexpr (SCOPE == NB_SCOPE_BLOCK) c.block();
    else if constexpr (SCOPE == NB_SCOPE_WARP) { if (threadIdx.x < 32) c.warp(); }
    else { if (threadIdx.x == 0) c.thread(); }
    __syncthreads();
  }
  stamp_end0(st);
}

// The sync kernel of Calls at args.scope.
template <typename Calls>
static const void *sync_kernel(const Args *a) {
  const void *fn = nullptr;
  with_scope(a->scope, [&](auto sc) { fn = (const void *)k_dev_sync<Calls, decltype(sc)::value>; });
  return fn;
}

// nvshmem_sync_all's calls.
struct SyncAllCalls {
  __device__ void block() const { nvshmemx_sync_all_block(); }
  __device__ void warp() const { nvshmemx_sync_all_warp(); }
  __device__ void thread() const { nvshmem_sync_all(); }
};

struct Sync {
  static constexpr bool blocks = false;  // no payload
  static constexpr bool all_dtypes = false;

  static int prepare(Run *r) { return Barrier::prepare(r); }  // the check's words

  static const void *device(const Args *a) { return sync_kernel<SyncAllCalls>(a); }
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
