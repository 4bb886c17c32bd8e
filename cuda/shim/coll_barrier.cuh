// coll_barrier.cuh: the barrier (no payload: a latency). Its check makes
// rounds of writes between barriers. A collective of collectives.cuh (its
// interface there).

enum { NB_OP_BARRIER = 44 };

// The same arguments as the other device collectives (one launch path).
__global__ void k_dev_barrier(float *, const float *, size_t, int iters, int64_t *st) {
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    nvshmemx_barrier_all_block();
  }
  stamp_end0(st);
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

using NcclBarrierFn = ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);

struct Barrier {
  static constexpr bool blocks = false;  // no payload
  static constexpr bool all_dtypes = false;

  // The check's words, one per PE, zeroed.
  static int prepare(Run *) {
    k_zero_u64<<<1, 64, 0, S.stream>>>((uint64_t *)S.scratch, S.npes);
    CKLAUNCH("barrier words");
    return 0;
  }

  static const void *device(const Args *) { return (const void *)k_dev_barrier; }
  static int stream(const Args *, int64_t, cudaStream_t s) {
    nvshmemx_barrier_all_on_stream(s);
    return 0;
  }
  // NCCL has no barrier: a 1-element AllReduce.
  static inline NcclFn<NcclBarrierFn> all_reduce{"ncclAllReduce"};
  static ncclResult_t nccl(const Args *, int64_t, ncclComm_t c, cudaStream_t s) {
    return all_reduce.call(S.src, S.dst, 1, ncclFloat32, ncclSum, c, s);
  }
};

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
                     snprintf(res->detail, sizeof res->detail, "after round %llu of the %s under test, PE %llu's word was not yet written", (unsigned long long)round, r->e->name, first);
                   });
    rc = r->e->launch(r, 1);
    if (!st) st = rc;
  }
  cudaError_t e = cudaStreamSynchronize(S.stream);
  if (!st && e != cudaSuccess) st = fail(NB_ERR, "barrier check: %s", cudaGetErrorString(e));
  return st;
}

static constexpr Check kCheckBarrier = {"every PE's writes seen by every PE after the barrier", coll_check_barrier,
                                        coll_corrupt_barrier};
static constexpr OpEntry kBarrier = {NB_OP_BARRIER, "coll.barrier", &kColl, 0, kCheckBarrier, coll_launch<Barrier>};
