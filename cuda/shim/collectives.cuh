// collectives.cuh: the collectives family and its entries in the dispatch
// table: AllReduce (NVSHMEM device thread/warp/block in one CTA, NVSHMEM
// on-stream, our multi-CTA one-shot and two-shot over symmetric memory,
// NCCL), broadcast, alltoall, allgather and barrier (NVSHMEM device and
// on-stream, NCCL), each a Coll<OP> (how every library issues it) and a
// table entry (what its output must hold). Included by nvshbench.cu. Every
// PE runs every launch; all start each launch together.
//
// NCCL is opened with dlopen at first use, so the shim loads without it, and
// the NCCL used is the one on the library path (its version is reported).
// Without NCCL's headers at build time the few types of its stable C ABI are
// declared here and the device-API AllReduce (nccldev.cuh) reports itself
// unavailable.

// The family's operation codes (private; see rma.cuh).
enum { NB_OP_ALLREDUCE = 41, NB_OP_BROADCAST = 42, NB_OP_ALLTOALL = 43, NB_OP_BARRIER = 44, NB_OP_ALLGATHER = 45 };

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

// With NCCL's headers on the include path (the pip wheel's, found by
// build-shim) the shim also carries the NCCL device API benchmarks
// (nccldev.cuh); the library itself is still opened with dlopen.
#if __has_include(<nccl_device.h>)
#include <nccl.h>
#include <nccl_device.h>
#define NB_NCCL_DEVICE 1
#else
#define NB_NCCL_DEVICE 0
typedef int ncclResult_t;  // ncclSuccess = 0
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
static const ncclResult_t ncclSuccess = 0;
static const ncclDataType_t ncclFloat16 = 6, ncclFloat32 = 7, ncclBfloat16 = 9;
static const ncclRedOp_t ncclSum = 0;
#endif

// --- values: small integers, so every sum is exact in float, half and bf16
__host__ __device__ static inline float cval(int64_t i, int pe, int64_t seed) {
  return (float)((i * 7 + pe * 13 + seed) & 7);
}

template <typename T> __device__ static inline T from_f(float v);
template <> __device__ inline float from_f<float>(float v) { return v; }
template <> __device__ inline __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <typename T> __device__ static inline float to_f(T v);
template <> __device__ inline float to_f<float>(float v) { return v; }
template <> __device__ inline float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ inline float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

// Fill the source for a collective. kind 0: allreduce/broadcast value(pe, i);
// kind 1: alltoall block j (destined to PE j) holds value(pe*31 + j*7, i).
template <typename T>
__global__ void k_cfill(T *b, int64_t n, int pe, int64_t seed, int kind, int64_t block) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (kind == 0) b[i] = from_f<T>(cval(i, pe, seed));
    else b[i] = from_f<T>(cval(i % block, pe * 31 + (int)(i / block) * 7, seed));
  }
}

// Check the result. kind 0 allreduce: sum over PEs; 1 broadcast: value(root);
// 2 alltoall: block p came from PE p; 3 allgather: block p is PE p's source.
template <typename T>
__global__ void k_ccheck(const T *b, int64_t n, int me, int npes, int64_t seed, int kind, int64_t block,
                         unsigned long long *bad, unsigned long long *first) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float want = 0;
    if (kind == 0) {
      for (int p = 0; p < npes; p++) want += cval(i, p, seed);
    } else if (kind == 1) {
      want = cval(i, 0, seed);
    } else if (kind == 3) {
      want = cval(i % block, (int)(i / block), seed);
    } else {
      int64_t from = i / block;
      want = cval(i % block, (int)from * 31 + me * 7, seed);
    }
    if (to_f<T>(b[i]) != want) {
      atomicAdd(bad, 1ull);
      atomicMin(first, (unsigned long long)i);
    }
  }
}

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
__global__ void k_dev_allreduce(T *dst, const T *src, size_t n, int iters) {
  for (int it = 0; it < iters; it++) {
    if (SCOPE == NB_SCOPE_BLOCK) red_block<T>(dst, src, n);
    else if (SCOPE == NB_SCOPE_WARP) { if (threadIdx.x < 32) red_warp<T>(dst, src, n); }
    else { if (threadIdx.x == 0) red_thread<T>(dst, src, n); }
    __syncthreads();
  }
}

__global__ void k_dev_broadcast(float *dst, const float *src, size_t n, int iters) {
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_broadcast_block(NVSHMEM_TEAM_WORLD, dst, src, n, 0);
    __syncthreads();
  }
}

__global__ void k_dev_alltoall(float *dst, const float *src, size_t n, int iters) {
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_alltoall_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
}

// n: elements each PE contributes (its block of the output).
__global__ void k_dev_allgather(float *dst, const float *src, size_t n, int iters) {
  for (int it = 0; it < iters; it++) {
    nvshmemx_float_fcollect_block(NVSHMEM_TEAM_WORLD, dst, src, n);
    __syncthreads();
  }
}

// The same arguments as the other device collectives (one launch path).
__global__ void k_dev_barrier(float *, const float *, size_t, int iters) {
  for (int it = 0; it < iters; it++) nvshmemx_barrier_all_block();
}

// --- our multi-CTA AllReduce over symmetric memory (float, load/store)

// CTA b of every PE meets CTA b of every other PE at `epoch`: what each
// wrote before is visible to the others after.
__device__ static inline void cta_sync(uint64_t *flags, int me, int npes, uint64_t epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    int b = blockIdx.x;
    for (int q = 0; q < npes; q++)
      if (q != me) nvshmemx_signal_op(flags + (size_t)me * NB_MAX_CTAS + b, epoch, NVSHMEM_SIGNAL_SET, q);
    for (int q = 0; q < npes; q++)
      if (q != me) nvshmem_signal_wait_until(flags + (size_t)q * NB_MAX_CTAS + b, NVSHMEM_CMP_GE, epoch);
  }
  __syncthreads();
}

struct PeerPtrs {
  const float *p[NB_MAX_PES];
};

// sum_range: dst[i] = sum over PEs of peers.p[q][i] for i in [lo, hi), with
// 16-byte loads where the range allows (lo is a multiple of 4 elements).
__device__ static inline void sum_range(float *dst, const PeerPtrs &peers, int npes, int64_t lo, int64_t hi) {
  int64_t v4 = lo + ((hi - lo) & ~3ll);
  for (int64_t i = lo + 4 * threadIdx.x; i < v4; i += 4 * blockDim.x) {
    float4 acc = make_float4(0, 0, 0, 0);
    for (int q = 0; q < npes; q++) {
      float4 x = __ldcg((const float4 *)(peers.p[q] + i));  // L2 only: a repeated read is never an L1 hit
      acc.x += x.x; acc.y += x.y; acc.z += x.z; acc.w += x.w;
    }
    *(float4 *)(dst + i) = acc;
  }
  for (int64_t i = v4 + threadIdx.x; i < hi; i += blockDim.x) {
    float acc = 0;
    for (int q = 0; q < npes; q++) acc += __ldcg(peers.p[q] + i);
    dst[i] = acc;
  }
}

// copy_range: dst[i] = src[i] for i in [lo, hi), 16-byte loads where possible.
__device__ static inline void copy_range(float *dst, const float *src, int64_t lo, int64_t hi) {
  int64_t v4 = lo + ((hi - lo) & ~3ll);
  for (int64_t i = lo + 4 * threadIdx.x; i < v4; i += 4 * blockDim.x) *(float4 *)(dst + i) = __ldcg((const float4 *)(src + i));
  for (int64_t i = v4 + threadIdx.x; i < hi; i += blockDim.x) dst[i] = __ldcg(src + i);
}

// Each CTA keeps its barrier epoch in device memory (epochs[blockIdx.x]), so
// a launch replayed from a CUDA graph continues the sequence instead of
// reusing epochs its peers already passed. Every PE runs the same launches,
// so the epochs stay in step.
__device__ static inline uint64_t epoch_load(uint64_t *epochs) {
  __shared__ uint64_t e;
  if (threadIdx.x == 0) e = epochs[blockIdx.x];
  __syncthreads();
  return e;
}

// One-shot: CTA b sums slice b of every PE's source into the local output.
__global__ void k_our_oneshot(float *dst, PeerPtrs peers, int64_t n, int me, int npes, uint64_t *flags, uint64_t *epochs,
                              int iters) {
  int64_t per = (n + gridDim.x - 1) / gridDim.x;
  per = (per + 3) & ~3ll;
  int64_t lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  uint64_t e = epoch_load(epochs);
  for (int it = 0; it < iters; it++) {
    cta_sync(flags, me, npes, ++e);
    if (lo < hi) sum_range(dst, peers, npes, lo, hi);
  }
  if (threadIdx.x == 0) epochs[blockIdx.x] = e;
}

// Two-shot: reduce-scatter (PE p reduces chunk p into its scratch), then
// all-gather (every PE copies chunk q from PE q's scratch).
__global__ void k_our_twoshot(float *dst, PeerPtrs peers, PeerPtrs scratch, float *myscratch, int64_t n, int me, int npes,
                              uint64_t *flags, uint64_t *epochs, int iters) {
  int64_t chunk = (n + npes - 1) / npes;
  chunk = (chunk + 3) & ~3ll;
  int64_t per = (chunk + gridDim.x - 1) / gridDim.x;
  per = (per + 3) & ~3ll;
  uint64_t e = epoch_load(epochs);
  for (int it = 0; it < iters; it++) {
    cta_sync(flags, me, npes, ++e);
    {  // reduce-scatter: this PE's chunk
      int64_t lo = me * chunk + blockIdx.x * per;
      int64_t end = (me + 1) * chunk < n ? (me + 1) * chunk : n;
      int64_t hi = lo + per < end ? lo + per : end;
      if (lo < hi) sum_range(myscratch, peers, npes, lo, hi);
    }
    cta_sync(flags, me, npes, ++e);
    for (int q = 0; q < npes; q++) {  // all-gather: every PE's chunk from its scratch
      int64_t lo = q * chunk + blockIdx.x * per;
      int64_t end = (q + 1) * chunk < n ? (q + 1) * chunk : n;
      int64_t hi = lo + per < end ? lo + per : end;
      if (lo < hi) copy_range(dst, scratch.p[q], lo, hi);
    }
  }
  if (threadIdx.x == 0) epochs[blockIdx.x] = e;
}

// --- NCCL through dlopen
struct NcclApi {
  void *h = nullptr;
  int version = 0;
  char why[256] = "";  // why it is not loaded
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*allGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  ncclResult_t (*getVersion)(int *);
  const char *(*errorString)(ncclResult_t);
};
static NcclApi g_nccl;
static int g_nccl_tried = 0;

// nccl_version_loaded opens libnccl.so.2 once (local to this PE) and
// returns its version, 0 when it is not loadable (g_nccl.why says why).
static int nccl_version_loaded(void) {
  if (g_nccl_tried) return g_nccl.version;
  g_nccl_tried = 1;
  void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    snprintf(g_nccl.why, sizeof g_nccl.why, "NCCL not available: %s", dlerror());
    return 0;
  }
#define SYM(f, n)                                                               \
  if (!(*(void **)&g_nccl.f = dlsym(h, n))) {                                   \
    snprintf(g_nccl.why, sizeof g_nccl.why, "libnccl.so.2 lacks %s", n);        \
    return 0;                                                                   \
  }
  SYM(getUniqueId, "ncclGetUniqueId") SYM(commInitRank, "ncclCommInitRank") SYM(allReduce, "ncclAllReduce")
  SYM(broadcast, "ncclBroadcast") SYM(allGather, "ncclAllGather") SYM(send, "ncclSend") SYM(recv, "ncclRecv") SYM(groupStart, "ncclGroupStart")
  SYM(groupEnd, "ncclGroupEnd") SYM(getVersion, "ncclGetVersion") SYM(errorString, "ncclGetErrorString")
#undef SYM
  int v = 0;
  if (g_nccl.getVersion(&v) != ncclSuccess) v = 0;
  g_nccl.h = h;
  g_nccl.version = v;
  return v;
}

#define NCK(call)                                                                                  \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    if (r_ != ncclSuccess) return fail(NB_ERR, "%s: %s", #call, g_nccl.errorString(r_));           \
  } while (0)

// One communicator per forced algorithm/protocol pair (NCCL reads NCCL_ALGO
// and NCCL_PROTO when a communicator is created), made on every PE at the
// first point that needs it. A creation that failed on any PE is remembered
// by every PE, so later points fail the same way everywhere.
struct CommEntry {
  char key[64];
  ncclComm_t comm;
  char failed[200];
};
static CommEntry g_comms[16];
static int g_ncomms = 0;

static CommEntry *comm_find(const char *key) {
  for (int i = 0; i < g_ncomms; i++)
    if (!strcmp(g_comms[i].key, key)) return &g_comms[i];
  return nullptr;
}

static void comm_key(const Args *a, char *key, size_t n) { snprintf(key, n, "%.31s/%.31s", a->nccl_algo, a->nccl_proto); }

// What every PE sends when a communicator is made: its status and, from
// PE 0, the unique ID.
struct IdMsg {
  int32_t status;
  int32_t pad;
  ncclUniqueId id;
};

// comm_make is collective (every PE, same point): two exchanges and
// ncclCommInitRank with NCCL_ALGO / NCCL_PROTO forced (when non-empty),
// unless the communicator of that key exists already (or failed: the same
// on every PE).
static int comm_make(const char *key, const char *algo, const char *proto) {
  if (comm_find(key)) return 0;
  if (g_ncomms == 16) return fail(NB_ERR, "too many NCCL communicators");
  CommEntry *ce = &g_comms[g_ncomms++];
  memset(ce, 0, sizeof *ce);
  snprintf(ce->key, sizeof ce->key, "%s", key);
  static IdMsg all[NB_MAX_PES];
  IdMsg m;
  memset(&m, 0, sizeof m);
  if (S.me == 0 && g_nccl.getUniqueId(&m.id) != ncclSuccess) m.status = NB_ERR;
  int rc = exchange(&m, sizeof m, all);
  int st = rc ? rc : (all[0].status ? fail(NB_ERR, "ncclGetUniqueId failed on PE 0") : 0);
  if (!st) {
    const char *oldA = getenv("NCCL_ALGO"), *oldP = getenv("NCCL_PROTO");
    char sa[128] = "", sp[128] = "";
    if (oldA) snprintf(sa, sizeof sa, "%s", oldA);
    if (oldP) snprintf(sp, sizeof sp, "%s", oldP);
    if (algo[0]) setenv("NCCL_ALGO", algo, 1);
    if (proto[0]) setenv("NCCL_PROTO", proto, 1);
    ncclResult_t nr = g_nccl.commInitRank(&ce->comm, S.npes, all[0].id, S.me);
    if (oldA) setenv("NCCL_ALGO", sa, 1); else unsetenv("NCCL_ALGO");
    if (oldP) setenv("NCCL_PROTO", sp, 1); else unsetenv("NCCL_PROTO");
    if (nr != ncclSuccess) st = fail(NB_ERR, "ncclCommInitRank (%s): %s", key, g_nccl.errorString(nr));
  }
  // Every PE learns whether every PE has the communicator.
  st = agree(st, 0, 0, 0, nullptr, nullptr);
  if (st) snprintf(ce->failed, sizeof ce->failed, "%s", g_err);
  return st;
}

static int nccl_setup(Run *r) {
  char key[64];
  comm_key(r->a, key, sizeof key);
  return comm_make(key, r->a->nccl_algo, r->a->nccl_proto);
}

static ncclDataType_t nccl_type(int dtype) {
  return dtype == NB_DT_BF16 ? ncclBfloat16 : (dtype == NB_DT_F16 ? ncclFloat16 : ncclFloat32);
}

static int esize(int dtype) { return dtype == NB_DT_F32 ? 4 : 2; }

// The NCCL device API AllReduce (nccldev.cuh).
static int nd_coll_validate(Run *r);
static int nd_coll_setup(Run *r);
static int nd_coll_launch(Run *r, int iters);

// What a collective's output must hold (its entry's `lands`, k_ccheck's
// kind): the sum over PEs, the root's source, block p from PE p (alltoall),
// block p = PE p's source (allgather), nothing (barrier). With blocks,
// args.size is the whole output and each PE sends size / npes to each PE.
enum { COLL_SUM = 0, COLL_ROOT = 1, COLL_BLOCKS = 2, COLL_GATHERED = 3, COLL_NONE = 4 };

static int coll_blocks(const Run *r) { return r->e->lands == COLL_BLOCKS || r->e->lands == COLL_GATHERED; }

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
    auto pick = [&](auto t) {
      using T = decltype(t);
      with_scope(a->scope, [&](auto sc) { fn = (const void *)k_dev_allreduce<T, decltype(sc)::value>; });
    };
    if (a->dtype == NB_DT_BF16) pick(__nv_bfloat16{});
    else if (a->dtype == NB_DT_F16) pick(__half{});
    else pick(float{});
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

// iters operations of collective OP on S.stream, by args.impl.
template <int OP>
static int coll_launch(Run *r, int iters) {
  using C = Coll<OP>;
  const Args *a = r->a;
  int me = S.me, npes = S.npes;
  int64_t n = a->size / esize(a->dtype);  // elements (per PE; with blocks, of the whole output)
  cudaStream_t s = S.stream;
  switch (a->impl) {
  case NB_IMPL_NVSHMEM_DEVICE: {
    size_t nn = (size_t)(coll_blocks(r) ? n / npes : n);  // NVSHMEM counts per PE
    int it = iters;
    void *dst = S.dst, *src = S.src;
    void *args[] = {&dst, &src, &nn, &it};
    int rc = nvshmemx_collective_launch(C::device(a), dim3(1), dim3(a->threads), args, 0, s);
    if (rc != 0) return fail(NB_ERR, "nvshmemx_collective_launch: %d", rc);
    CKLAUNCH("device collective");
    return 0;
  }
  case NB_IMPL_NVSHMEM_STREAM:
    for (int i = 0; i < iters; i++)
      if (int rc = C::stream(a, n, s)) return fail(NB_ERR, "NVSHMEM on-stream %s: %d", r->e->name, rc);
    return 0;
  case NB_IMPL_OUR_ONESHOT:
  case NB_IMPL_OUR_TWOSHOT: {  // AllReduce only (validated)
    PeerPtrs peers, scr;
    for (int q = 0; q < npes; q++) {
      peers.p[q] = (const float *)nvshmem_ptr(S.src, q);
      scr.p[q] = (const float *)nvshmem_ptr(S.scratch, q);
      if (!peers.p[q] || !scr.p[q]) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store: our AllReduce needs P2P to every PE", q);
    }
    if (a->impl == NB_IMPL_OUR_ONESHOT)
      k_our_oneshot<<<a->ctas, a->threads, 0, s>>>((float *)S.dst, peers, n, me, npes, S.cflags, S.epochs, iters);
    else
      k_our_twoshot<<<a->ctas, a->threads, 0, s>>>((float *)S.dst, peers, scr, (float *)S.scratch, n, me, npes, S.cflags, S.epochs, iters);
    CKLAUNCH("our allreduce");
    return 0;
  }
  case NB_IMPL_LSA_ONESHOT:
  case NB_IMPL_LSA_TWOSHOT:  // AllReduce only (validated)
    return nd_coll_launch(r, iters);
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
static int coll_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = 1;  // every PE runs and times (PE 0's samples are reported)
  r->target = -1;
  int es = esize(a->dtype);
  if (r->e->lands != COLL_NONE && (a->size <= 0 || a->size > S.buf || a->size % es))
    return fail(NB_ERR, "size %lld: 1..%lld and a multiple of %d", (long long)a->size, (long long)S.buf, es);
  if (coll_blocks(r) && (a->size / es) % S.npes)
    return fail(NB_UNREACHABLE, "%s: %lld elements do not divide by %d PEs", r->e->name, (long long)(a->size / es), S.npes);
  if (a->threads <= 0 || a->threads > 1024 || a->ctas <= 0 || a->ctas > NB_MAX_CTAS) return fail(NB_ERR, "launch %d x %d invalid", a->ctas, a->threads);
  if (a->impl < NB_IMPL_NVSHMEM_DEVICE || a->impl > NB_IMPL_LSA_TWOSHOT) return fail(NB_ERR, "unknown implementation %d", a->impl);
  if (a->op != NB_OP_ALLREDUCE && a->dtype != NB_DT_F32) return fail(NB_ERR, "%s: float only", r->e->name);
  if (a->impl == NB_IMPL_LSA_ONESHOT || a->impl == NB_IMPL_LSA_TWOSHOT) return nd_coll_validate(r);
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
static double coll_per_op(Run *) { return 1.0; }

static int coll_prepare(Run *r) {
  const Args *a = r->a;
  if (r->e->lands == COLL_NONE) return 0;
  int64_t n = a->size / esize(a->dtype);
  int blocks = r->e->lands == COLL_BLOCKS;  // a source block per destination PE
  int64_t block = coll_blocks(r) ? n / S.npes : n;
  if (a->dtype == NB_DT_BF16) k_cfill<__nv_bfloat16><<<1024, 256, 0, S.stream>>>((__nv_bfloat16 *)S.src, n, S.me, a->seed, blocks, block);
  else if (a->dtype == NB_DT_F16) k_cfill<__half><<<1024, 256, 0, S.stream>>>((__half *)S.src, n, S.me, a->seed, blocks, block);
  else k_cfill<float><<<1024, 256, 0, S.stream>>>((float *)S.src, n, S.me, a->seed, blocks, block);
  CKLAUNCH("collective fill");
  if (a->verify) return poison_dst(a->size);
  return 0;
}

static int coll_setup(Run *r) {
  if (r->a->impl == NB_IMPL_NCCL) return nccl_setup(r);
  if (r->a->impl == NB_IMPL_LSA_ONESHOT || r->a->impl == NB_IMPL_LSA_TWOSHOT) return nd_coll_setup(r);
  return 0;
}

static int coll_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  if (r->e->lands == COLL_NONE) return 0;
  int64_t n = a->size / esize(a->dtype);
  int kind = r->e->lands;
  int64_t block = coll_blocks(r) ? n / S.npes : n;
  int rc = count_reset();
  if (rc) return rc;
  if (a->dtype == NB_DT_BF16) k_ccheck<__nv_bfloat16><<<1024, 256, 0, S.stream>>>((const __nv_bfloat16 *)S.dst, n, S.me, S.npes, a->seed, kind, block, S.count, S.count + 1);
  else if (a->dtype == NB_DT_F16) k_ccheck<__half><<<1024, 256, 0, S.stream>>>((const __half *)S.dst, n, S.me, S.npes, a->seed, kind, block, S.count, S.count + 1);
  else k_ccheck<float><<<1024, 256, 0, S.stream>>>((const float *)S.dst, n, S.me, S.npes, a->seed, kind, block, S.count, S.count + 1);
  CKLAUNCH("collective check");
  unsigned long long h[2];
  if ((rc = count_read(h))) return rc;
  res->checked += n;
  res->errors += (int64_t)h[0];
  if (h[0] && !res->detail[0]) snprintf(res->detail, sizeof res->detail, "element %llu wrong (%llu of %lld)", h[1], h[0], (long long)n);
  return 0;
}

static int64_t coll_bytes(Run *r) { return r->e->lands == COLL_NONE ? 0 : r->a->size; }

// Source and destination live on every PE's GPU; twice that when PEs share
// a GPU.
static int64_t coll_work_set(Run *r) {
  int shared = 0;
  for (int q = 0; q < S.npes; q++)
    if (q != S.me && path_to(q) == NB_PATH_LOCAL) shared = 1;
  int64_t ws = 2 * r->a->size;
  return shared ? 2 * ws : ws;
}

static const Family kColl = {"collectives", coll_validate, coll_active, coll_synced, 2, 0, coll_per_op, coll_prepare,
                             coll_setup, nullptr, coll_check, coll_bytes, coll_work_set};

static const OpEntry kCollOps[] = {
    {NB_OP_ALLREDUCE, "coll.allreduce", &kColl, COLL_SUM, coll_launch<NB_OP_ALLREDUCE>},
    {NB_OP_BROADCAST, "coll.broadcast", &kColl, COLL_ROOT, coll_launch<NB_OP_BROADCAST>},
    {NB_OP_ALLTOALL, "coll.alltoall", &kColl, COLL_BLOCKS, coll_launch<NB_OP_ALLTOALL>},
    {NB_OP_ALLGATHER, "coll.allgather", &kColl, COLL_GATHERED, coll_launch<NB_OP_ALLGATHER>},
    {NB_OP_BARRIER, "coll.barrier", &kColl, COLL_NONE, coll_launch<NB_OP_BARRIER>},
};
