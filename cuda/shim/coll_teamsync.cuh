// coll_teamsync.cuh: nvshmem_team_sync on a team split from
// NVSHMEM_TEAM_WORLD (start 0, stride 1, every PE: the same PEs as WORLD),
// by one thread, a warp or a block of one CTA, and on a stream: beside
// coll_sync.cuh's sync_all on WORLD itself, what a collective costs on a
// split team (its own psync, its own team state) against WORLD's. The team
// is split once, by the first point that runs it (collective: every PE
// runs every point), and kept. Checked as the barrier is (coll_barrier.cuh:
// rounds of quieted writes, the sync under test between). Like every
// NVSHMEM team collective it needs one PE per GPU (the suite waives it
// where PEs share a GPU). A collective of collectives.cuh.

enum { NB_OP_TEAM_SYNC = 134 };

__device__ nvshmem_team_t d_split_team;  // the split team, for the kernels
static nvshmem_team_t g_split_team = NVSHMEM_TEAM_INVALID;

// nvshmem_team_sync's calls on the split team (coll_sync.cuh's kernel
// runs them).
struct SplitTeamCalls {
  nvshmem_team_t t;
  __device__ SplitTeamCalls() : t(d_split_team) {}
  __device__ void block() const { nvshmemx_team_sync_block(t); }
  __device__ void warp() const { nvshmemx_team_sync_warp(t); }
  __device__ void thread() const { nvshmem_team_sync(t); }
};

struct TeamSync {
  static constexpr bool blocks = false;  // no payload
  static constexpr bool all_dtypes = false;

  static int prepare(Run *r) { return Barrier::prepare(r); }  // the check's words

  // Collective, every PE (coll_setup): the team of every PE, split once.
  static int team_setup(Run *) {
    if (g_split_team != NVSHMEM_TEAM_INVALID) return 0;
    nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
    if (team_of_all(&t) != 0 || t == NVSHMEM_TEAM_INVALID)
      return fail(NB_ERR, "nvshmem_team_split_strided of every PE failed");
    cudaError_t e = cudaMemcpyToSymbol(d_split_team, &t, sizeof t);
    if (e != cudaSuccess) return fail(NB_ERR, "the split team to the device: %s", cudaGetErrorString(e));
    g_split_team = t;
    return 0;
  }

  static const void *device(const Args *a) { return sync_kernel<SplitTeamCalls>(a); }
  static int stream(const Args *, int64_t, cudaStream_t s) { return nvshmemx_team_sync_on_stream(g_split_team, s); }
  // NCCL: no row (its communicators are its teams; collectives/barrier/nccl).
  static ncclResult_t nccl(const Args *a, int64_t n, ncclComm_t c, cudaStream_t s) { return Barrier::nccl(a, n, c, s); }
};

static constexpr Check kCheckTeamSync = {"every PE's writes, quieted before it, seen by every PE after the split team's sync", coll_check_barrier,
                                         coll_corrupt_barrier};
static constexpr OpEntry kTeamSync = {NB_OP_TEAM_SYNC, "coll.teamsync", &kColl, 0, kCheckTeamSync, coll_launch<TeamSync>};
