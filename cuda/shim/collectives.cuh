// collectives.cuh: AllReduce (NVSHMEM device thread/warp/block in one CTA,
// NVSHMEM on-stream, our multi-CTA one-shot and two-shot over symmetric
// memory, NCCL), broadcast, alltoall and barrier (NVSHMEM device and
// on-stream, NCCL). Included by nvshbench.cu.
//
// NCCL is opened with dlopen at first use, so the shim builds and loads
// without it, and the NCCL used is the one on the library path (its version
// is reported). The few NCCL types needed are its stable C ABI, declared here
// so no NCCL header is needed at build time.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

typedef int ncclResult_t;  // ncclSuccess = 0
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
static const ncclResult_t ncclSuccess = 0;
static const ncclDataType_t ncclFloat16 = 6, ncclFloat32 = 7, ncclBfloat16 = 9;
static const ncclRedOp_t ncclSum = 0;

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
// 2 alltoall: block p came from PE p.
template <typename T>
__global__ void k_ccheck(const T *b, int64_t n, int me, int npes, int64_t seed, int kind, int64_t block,
                         unsigned long long *bad, unsigned long long *first) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float want = 0;
    if (kind == 0) {
      for (int p = 0; p < npes; p++) want += cval(i, p, seed);
    } else if (kind == 1) {
      want = cval(i, 0, seed);
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

__global__ void k_dev_barrier(int iters) {
  for (int it = 0; it < iters; it++) nvshmemx_barrier_all_block();
}

// --- our multi-CTA AllReduce over symmetric memory (float, load/store)
#define NB_MAX_PES 64
#define NB_MAX_CTAS 1024

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
      float4 x = *(const float4 *)(peers.p[q] + i);
      acc.x += x.x; acc.y += x.y; acc.z += x.z; acc.w += x.w;
    }
    *(float4 *)(dst + i) = acc;
  }
  for (int64_t i = v4 + threadIdx.x; i < hi; i += blockDim.x) {
    float acc = 0;
    for (int q = 0; q < npes; q++) acc += peers.p[q][i];
    dst[i] = acc;
  }
}

// copy_range: dst[i] = src[i] for i in [lo, hi), 16-byte loads where possible.
__device__ static inline void copy_range(float *dst, const float *src, int64_t lo, int64_t hi) {
  int64_t v4 = lo + ((hi - lo) & ~3ll);
  for (int64_t i = lo + 4 * threadIdx.x; i < v4; i += 4 * blockDim.x) *(float4 *)(dst + i) = *(const float4 *)(src + i);
  for (int64_t i = v4 + threadIdx.x; i < hi; i += blockDim.x) dst[i] = src[i];
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
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  ncclResult_t (*getVersion)(int *);
  const char *(*errorString)(ncclResult_t);
};
static NcclApi g_nccl;
static uint8_t *g_ncclid = nullptr;  // symmetric, to share the NCCL unique ID

static int nccl_load() {
  if (g_nccl.h) return 0;
  void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (!h) return fail(-2, "NCCL not available: %s", dlerror());
#define SYM(f, n) if (!(*(void **)&g_nccl.f = dlsym(h, n))) return fail(-1, "libnccl.so.2 lacks %s", n);
  SYM(getUniqueId, "ncclGetUniqueId") SYM(commInitRank, "ncclCommInitRank") SYM(allReduce, "ncclAllReduce")
  SYM(broadcast, "ncclBroadcast") SYM(send, "ncclSend") SYM(recv, "ncclRecv") SYM(groupStart, "ncclGroupStart")
  SYM(groupEnd, "ncclGroupEnd") SYM(getVersion, "ncclGetVersion") SYM(errorString, "ncclGetErrorString")
#undef SYM
  g_nccl.h = h;
  return 0;
}

#define NCK(call)                                                                           \
  do {                                                                                      \
    ncclResult_t r_ = (call);                                                               \
    if (r_ != ncclSuccess) return fail(-1, "%s: %s", #call, g_nccl.errorString(r_));         \
  } while (0)

__global__ void k_getbytes(uint8_t *dst, const uint8_t *src, int n, int pe) { nvshmem_getmem(dst, src, n, pe); }

// One communicator per forced algorithm/protocol pair: NCCL reads NCCL_ALGO
// and NCCL_PROTO when a communicator is created.
struct CommEntry {
  char key[64];
  ncclComm_t comm;
};
static CommEntry g_comms[16];
static int g_ncomms = 0;

static int nccl_comm(const char *algo, const char *proto, ncclComm_t *out) {
  char key[64];
  snprintf(key, sizeof key, "%s/%s", algo, proto);
  for (int i = 0; i < g_ncomms; i++)
    if (!strcmp(g_comms[i].key, key)) { *out = g_comms[i].comm; return 0; }
  if (g_ncomms == 16) return fail(-1, "too many NCCL communicators");
  int rc = nccl_load();
  if (rc) return rc;
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (!g_ncclid) {
    g_ncclid = (uint8_t *)nvshmem_malloc(sizeof(ncclUniqueId));
    if (!g_ncclid) return fail(-1, "nvshmem_malloc for the NCCL id failed");
  }
  ncclUniqueId id;
  if (me == 0) {
    NCK(g_nccl.getUniqueId(&id));
    CK(cudaMemcpy(g_ncclid, &id, sizeof id, cudaMemcpyHostToDevice));
  }
  nvshmem_barrier_all();
  if (me != 0) {
    uint8_t *tmp;
    CK(cudaMalloc(&tmp, sizeof id));
    k_getbytes<<<1, 1, 0, g_stream>>>(tmp, g_ncclid, sizeof id, 0);
    CKLAUNCH("nccl id get");
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(&id, tmp, sizeof id, cudaMemcpyDeviceToHost));
    cudaFree(tmp);
  }
  nvshmem_barrier_all();
  const char *oldA = getenv("NCCL_ALGO"), *oldP = getenv("NCCL_PROTO");
  char sa[128] = "", sp[128] = "";
  if (oldA) snprintf(sa, sizeof sa, "%s", oldA);
  if (oldP) snprintf(sp, sizeof sp, "%s", oldP);
  if (*algo) setenv("NCCL_ALGO", algo, 1);
  if (*proto) setenv("NCCL_PROTO", proto, 1);
  ncclComm_t c;
  ncclResult_t r = g_nccl.commInitRank(&c, npes, id, me);
  if (oldA) setenv("NCCL_ALGO", sa, 1); else unsetenv("NCCL_ALGO");
  if (oldP) setenv("NCCL_PROTO", sp, 1); else unsetenv("NCCL_PROTO");
  if (r != ncclSuccess) return fail(-1, "ncclCommInitRank (%s): %s", key, g_nccl.errorString(r));
  snprintf(g_comms[g_ncomms].key, sizeof g_comms[g_ncomms].key, "%s", key);
  g_comms[g_ncomms++].comm = c;
  *out = c;
  return 0;
}

static ncclDataType_t nccl_type(int dtype) {
  return dtype == NB_DT_BF16 ? ncclBfloat16 : (dtype == NB_DT_F16 ? ncclFloat16 : ncclFloat32);
}

static uint64_t *g_cflags = nullptr;  // symmetric NB_MAX_PES x NB_MAX_CTAS signal words
static float *g_scratch = nullptr;    // symmetric scratch of the two-shot
static uint64_t *g_epochs = nullptr;  // per-CTA barrier epochs of our AllReduce (device, local)

static int esize(int dtype) { return dtype == NB_DT_F32 ? 4 : 2; }

// One operation (iters of them) of a collective on g_stream.
static int coll_issue(const nb_coll_args *a, int iters, ncclComm_t comm) {
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int64_t n = a->size / esize(a->dtype);  // elements per PE
  cudaStream_t s = g_stream;
  switch (a->impl) {
  case NB_IMPL_NVSHMEM_DEVICE: {
    size_t nn = (size_t)n;
    int it = iters;
    void *dst = g_dst, *src = g_src;
    void *args[] = {&dst, &src, &nn, &it};
    void *bargs[] = {&it};
    const void *fn = nullptr;
    if (a->coll == NB_COLL_ALLREDUCE) {
#define PICK(T)                                                                     \
  fn = a->scope == NB_SCOPE_BLOCK ? (const void *)k_dev_allreduce<T, NB_SCOPE_BLOCK>  \
     : a->scope == NB_SCOPE_WARP  ? (const void *)k_dev_allreduce<T, NB_SCOPE_WARP>   \
                                  : (const void *)k_dev_allreduce<T, NB_SCOPE_THREAD>;
      if (a->dtype == NB_DT_BF16) { PICK(__nv_bfloat16) }
      else if (a->dtype == NB_DT_F16) { PICK(__half) }
      else { PICK(float) }
#undef PICK
    } else if (a->coll == NB_COLL_BROADCAST) fn = (const void *)k_dev_broadcast;
    else if (a->coll == NB_COLL_ALLTOALL) { nn = (size_t)(n / npes); fn = (const void *)k_dev_alltoall; }
    else fn = (const void *)k_dev_barrier;
    int rc = nvshmemx_collective_launch(fn, dim3(1), dim3(a->threads), a->coll == NB_COLL_BARRIER ? bargs : args, 0, s);
    if (rc != 0) return fail(-1, "nvshmemx_collective_launch: %d", rc);
    CKLAUNCH("device collective");
    return 0;
  }
  case NB_IMPL_NVSHMEM_STREAM:
    for (int i = 0; i < iters; i++) {
      int rc = 0;
      if (a->coll == NB_COLL_ALLREDUCE) {
        if (a->dtype == NB_DT_BF16) rc = nvshmemx_bfloat16_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (__nv_bfloat16 *)g_dst, (const __nv_bfloat16 *)g_src, n, s);
        else if (a->dtype == NB_DT_F16) rc = nvshmemx_half_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (__half *)g_dst, (const __half *)g_src, n, s);
        else rc = nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float *)g_dst, (const float *)g_src, n, s);
      } else if (a->coll == NB_COLL_BROADCAST) rc = nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, (float *)g_dst, (const float *)g_src, n, 0, s);
      else if (a->coll == NB_COLL_ALLTOALL) rc = nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, (float *)g_dst, (const float *)g_src, n / npes, s);
      else nvshmemx_barrier_all_on_stream(s);
      if (rc != 0) return fail(-1, "NVSHMEM on-stream collective: %d", rc);
    }
    return 0;
  case NB_IMPL_OUR_ONESHOT:
  case NB_IMPL_OUR_TWOSHOT: {
    PeerPtrs peers, scr;
    for (int q = 0; q < npes; q++) {
      peers.p[q] = (const float *)nvshmem_ptr(g_src, q);
      scr.p[q] = (const float *)nvshmem_ptr(g_scratch, q);
      if (!peers.p[q] || !scr.p[q]) return fail(-2, "PE %d is not reachable by load/store: our AllReduce needs P2P to every PE", q);
    }
    if (a->impl == NB_IMPL_OUR_ONESHOT)
      k_our_oneshot<<<a->ctas, a->threads, 0, s>>>((float *)g_dst, peers, n, me, npes, g_cflags, g_epochs, iters);
    else
      k_our_twoshot<<<a->ctas, a->threads, 0, s>>>((float *)g_dst, peers, scr, g_scratch, n, me, npes, g_cflags, g_epochs, iters);
    CKLAUNCH("our allreduce");
    return 0;
  }
  case NB_IMPL_NCCL:
    for (int i = 0; i < iters; i++) {
      if (a->coll == NB_COLL_ALLREDUCE) NCK(g_nccl.allReduce(g_src, g_dst, n, nccl_type(a->dtype), ncclSum, comm, s));
      else if (a->coll == NB_COLL_BROADCAST) NCK(g_nccl.broadcast(g_src, g_dst, n, ncclFloat32, 0, comm, s));
      else if (a->coll == NB_COLL_ALLTOALL) {
        int64_t blk = n / npes;
        NCK(g_nccl.groupStart());
        for (int q = 0; q < npes; q++) {
          NCK(g_nccl.send((float *)g_src + q * blk, blk, ncclFloat32, q, comm, s));
          NCK(g_nccl.recv((float *)g_dst + q * blk, blk, ncclFloat32, q, comm, s));
        }
        NCK(g_nccl.groupEnd());
      } else NCK(g_nccl.allReduce(g_src, g_dst, 1, ncclFloat32, ncclSum, comm, s));  // barrier: 1-element allreduce
    }
    return 0;
  }
  return fail(-1, "unknown implementation %d", a->impl);
}

extern "C" int nb_coll_run(const nb_coll_args *a, double *samples_out, nb_rma_result *res) {
  memset(res, 0, sizeof *res);
  if (!g_inited) return fail(-1, "not initialised");
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (npes > NB_MAX_PES) return fail(-1, "more than %d PEs", NB_MAX_PES);
  int es = esize(a->dtype);
  if (a->size <= 0 || a->size > g_buf || a->size % es) return fail(-1, "size %lld: 1..%lld and a multiple of %d", (long long)a->size, (long long)g_buf, es);
  if (a->coll == NB_COLL_ALLTOALL && (a->size / es) % npes) return fail(-2, "alltoall: %lld elements do not divide by %d PEs", (long long)(a->size / es), npes);
  if (a->threads <= 0 || a->threads > 1024 || a->ctas <= 0 || a->ctas > NB_MAX_CTAS) return fail(-1, "launch %d x %d invalid", a->ctas, a->threads);
  if (a->iters < 0 || a->samples <= 0 || a->warmup < 0) return fail(-1, "iters >= 0, samples > 0");
  if (!g_cflags) {
    g_cflags = (uint64_t *)nvshmem_malloc(sizeof(uint64_t) * NB_MAX_PES * NB_MAX_CTAS);
    g_scratch = (float *)nvshmem_malloc(g_buf);
    if (!g_cflags || !g_scratch) return fail(-1, "nvshmem_malloc of the collective flags/scratch failed (NVSHMEM_SYMMETRIC_SIZE?)");
    CK(cudaMemset(g_cflags, 0, sizeof(uint64_t) * NB_MAX_PES * NB_MAX_CTAS));
    CK(cudaMalloc(&g_epochs, sizeof(uint64_t) * NB_MAX_CTAS));
    CK(cudaMemset(g_epochs, 0, sizeof(uint64_t) * NB_MAX_CTAS));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
  }
  ncclComm_t comm = nullptr;
  if (a->impl == NB_IMPL_NCCL) {
    int rc = nccl_comm(a->nccl_algo, a->nccl_proto, &comm);
    if (rc) return rc;
    int v = 0;
    if (g_nccl.getVersion && g_nccl.getVersion(&v) == ncclSuccess) res->aux = v;
  }
  int64_t n = a->size / es;
  int kind = a->coll == NB_COLL_ALLREDUCE ? 0 : (a->coll == NB_COLL_BROADCAST ? 1 : 2);
  int64_t block = a->coll == NB_COLL_ALLTOALL ? n / npes : n;
  if (a->coll != NB_COLL_BARRIER) {
    if (a->dtype == NB_DT_BF16) k_cfill<__nv_bfloat16><<<1024, 256, 0, g_stream>>>((__nv_bfloat16 *)g_src, n, me, a->seed, kind == 2, block);
    else if (a->dtype == NB_DT_F16) k_cfill<__half><<<1024, 256, 0, g_stream>>>((__half *)g_src, n, me, a->seed, kind == 2, block);
    else k_cfill<float><<<1024, 256, 0, g_stream>>>((float *)g_src, n, me, a->seed, kind == 2, block);
    if (a->verify) k_poison<<<1024, 256, 0, g_stream>>>(g_dst, a->size);
    CKLAUNCH("collective fill");
  }
  CK(cudaStreamSynchronize(g_stream));
  nvshmem_barrier_all();

  // Iterations per launch (or per graph): calibrated on PE 0, shared.
  int iters = a->iters;
  if (iters == 0) {
    CK(cudaEventRecord(g_ev0, g_stream));
    int rc = coll_issue(a, 2, comm);
    if (rc) return rc;
    CK(cudaEventRecord(g_ev1, g_stream));
    CK(cudaEventSynchronize(g_ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    double per = ms / 2;
    int64_t want = (int64_t)(20.0 / (per > 1e-4 ? per : 1e-4));
    if (want < 5) want = 5;
    if (want > 1000) want = 1000;
    static int64_t *g_it = nullptr;
    if (!g_it) g_it = (int64_t *)nvshmem_malloc(sizeof(int64_t));
    if (me == 0) CK(cudaMemcpy(g_it, &want, sizeof want, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();
    if (me != 0) {
      int64_t *tmp;
      CK(cudaMalloc(&tmp, sizeof want));
      k_getbytes<<<1, 1, 0, g_stream>>>((uint8_t *)tmp, (const uint8_t *)g_it, sizeof want, 0);
      CK(cudaStreamSynchronize(g_stream));
      CK(cudaMemcpy(&want, tmp, sizeof want, cudaMemcpyDeviceToHost));
      cudaFree(tmp);
    }
    nvshmem_barrier_all();
    iters = (int)want;
  }
  cudaGraphExec_t gexec = nullptr;
  if (a->graph) {
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeRelaxed));
    int rc = coll_issue(a, iters, comm);
    cudaError_t ce = cudaStreamEndCapture(g_stream, &graph);
    if (rc) return rc;
    if (ce != cudaSuccess) return fail(-4, "this collective cannot be captured in a CUDA graph: %s", cudaGetErrorString(ce));
    CK(cudaGraphInstantiate(&gexec, graph, 0));
    cudaGraphDestroy(graph);
  }
  for (int sIdx = -a->warmup; sIdx < a->samples; sIdx++) {
    nvshmem_barrier_all();
    CK(cudaEventRecord(g_ev0, g_stream));
    if (gexec) CK(cudaGraphLaunch(gexec, g_stream));
    else {
      int rc = coll_issue(a, iters, comm);
      if (rc) return rc;
    }
    CK(cudaEventRecord(g_ev1, g_stream));
    CK(cudaEventSynchronize(g_ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    if (sIdx >= 0) samples_out[sIdx] = (double)ms * 1e-3 / iters;
  }
  if (gexec) cudaGraphExecDestroy(gexec);
  CK(cudaStreamSynchronize(g_stream));
  res->initiator = me == 0;
  res->iters = iters;
  res->bytes = a->coll == NB_COLL_BARRIER ? 0 : a->size;
  nvshmem_barrier_all();

  if (a->verify && a->coll != NB_COLL_BARRIER) {
    unsigned long long h[2] = {0, ~0ull}, *first;
    CK(cudaMemcpy(g_count, &h[0], sizeof h[0], cudaMemcpyHostToDevice));
    CK(cudaMalloc(&first, sizeof *first));
    CK(cudaMemcpy(first, &h[1], sizeof h[1], cudaMemcpyHostToDevice));
    if (a->dtype == NB_DT_BF16) k_ccheck<__nv_bfloat16><<<1024, 256, 0, g_stream>>>((const __nv_bfloat16 *)g_dst, n, me, npes, a->seed, kind, block, g_count, first);
    else if (a->dtype == NB_DT_F16) k_ccheck<__half><<<1024, 256, 0, g_stream>>>((const __half *)g_dst, n, me, npes, a->seed, kind, block, g_count, first);
    else k_ccheck<float><<<1024, 256, 0, g_stream>>>((const float *)g_dst, n, me, npes, a->seed, kind, block, g_count, first);
    CKLAUNCH("collective check");
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(&h[0], g_count, sizeof h[0], cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&h[1], first, sizeof h[1], cudaMemcpyDeviceToHost));
    cudaFree(first);
    res->checked = n;
    res->errors = (int64_t)h[0];
    if (h[0]) snprintf(res->detail, sizeof res->detail, "element %llu wrong (%llu of %lld)", h[1], h[0], (long long)n);
  }
  return reduce_checks(res, me);
}
