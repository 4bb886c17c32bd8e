// nvshbench.cu: kernels and the C ABI of libnvshbench.so (see nvshbench.h).
// Every NVSHMEM / CUDA call of the tool lives here. Build: make cuda, or let
// nvshbench build it (cuda/build.go); both use the same nvcc command.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvshbench.h"

static char g_err[1024];
static int g_inited = 0;
static uint8_t *g_src = nullptr;  // symmetric, g_buf bytes
static uint8_t *g_dst = nullptr;  // symmetric, g_buf bytes
static int64_t g_buf = 0;
static unsigned long long *g_count = nullptr;  // device counter for checks
static cudaStream_t g_stream;
static cudaEvent_t g_ev0, g_ev1;

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  return code;
}

#define CK(call)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess)                                                            \
      return fail(-1, "%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
  } while (0)

#define CKLAUNCH(what)                                                                \
  do {                                                                                \
    cudaError_t e_ = cudaGetLastError();                                              \
    if (e_ != cudaSuccess) return fail(-1, "launch of %s: %s", what, cudaGetErrorString(e_)); \
  } while (0)

extern "C" int nb_abi_version(void) { return NB_ABI_VERSION; }
extern "C" const char *nb_last_error(void) { return g_err; }

extern "C" int nb_device_count(int *count) {
  CK(cudaGetDeviceCount(count));
  return 0;
}

extern "C" int nb_device_info(int dev, nb_info *o) {
  memset(o, 0, sizeof *o);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  o->device = dev;
  o->mem_bytes = (int64_t)p.totalGlobalMem;
  o->l2_bytes = p.l2CacheSize;
  o->sms = p.multiProcessorCount;
  int clk = 0;
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
  o->clock_khz = clk;
  o->cc_major = p.major;
  o->cc_minor = p.minor;
  snprintf(o->name, sizeof o->name, "%s", p.name);
  const unsigned char *u = (const unsigned char *)p.uuid.bytes;
  snprintf(o->uuid, sizeof o->uuid,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
           u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  cudaDeviceGetPCIBusId(o->pci_bus_id, sizeof o->pci_bus_id, dev);
  cudaRuntimeGetVersion(&o->cuda_runtime);
  cudaDriverGetVersion(&o->cuda_driver);
  o->my_pe = -1;
  return 0;
}

extern "C" int nb_can_access_peer(int dev, int peer, int *can) {
  CK(cudaDeviceCanAccessPeer(can, dev, peer));
  return 0;
}

extern "C" int nb_get_uniqueid(uint8_t *uid, int len) {
  nvshmemx_uniqueid_t id;
  if (len < (int)sizeof id) return fail(-1, "unique id buffer too small: %d < %zu", len, sizeof id);
  int rc = nvshmemx_get_uniqueid(&id);
  if (rc != 0) return fail(-1, "nvshmemx_get_uniqueid failed: %d", rc);
  memcpy(uid, &id, sizeof id);
  return (int)sizeof id;
}

extern "C" int nb_init(int mode, int rank, int nranks, const uint8_t *uid, int uidlen, int device,
                       int64_t heap) {
  if (g_inited) return fail(-1, "already initialised");
  CK(cudaSetDevice(device));
  // The symmetric heap must hold the source, destination and scratch buffers
  // plus NVSHMEM's own reserves.
  if (getenv("NVSHMEM_SYMMETRIC_SIZE") == nullptr) {
    char v[64];
    snprintf(v, sizeof v, "%lld", (long long)(3 * heap + (512LL << 20)));
    setenv("NVSHMEM_SYMMETRIC_SIZE", v, 1);
  }
  if (mode == 0) {
    nvshmemx_uniqueid_t id;
    if (uidlen != (int)sizeof id) return fail(-1, "unique id has %d bytes, want %zu", uidlen, sizeof id);
    memcpy(&id, uid, sizeof id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (rc != 0) return fail(-1, "nvshmemx_set_attr_uniqueid_args: %d", rc);
    rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0) return fail(-1, "nvshmemx_init_attr (unique id bootstrap): %d", rc);
  } else {
    nvshmem_init();
  }
  g_inited = 1;
  g_buf = heap;
  g_src = (uint8_t *)nvshmem_malloc(heap);
  g_dst = (uint8_t *)nvshmem_malloc(heap);
  if (!g_src || !g_dst) return fail(-1, "nvshmem_malloc of 2 x %lld bytes failed (NVSHMEM_SYMMETRIC_SIZE too small?)", (long long)heap);
  CK(cudaMalloc(&g_count, sizeof *g_count));
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CK(cudaEventCreate(&g_ev0));
  CK(cudaEventCreate(&g_ev1));
  return 0;
}

extern "C" int nb_finalize(void) {
  if (!g_inited) return 0;
  cudaDeviceSynchronize();
  nvshmem_barrier_all();
  nvshmem_free(g_src);
  nvshmem_free(g_dst);
  cudaFree(g_count);
  cudaEventDestroy(g_ev0);
  cudaEventDestroy(g_ev1);
  cudaStreamDestroy(g_stream);
  nvshmem_finalize();
  g_inited = 0;
  return 0;
}

extern "C" int nb_info_get(nb_info *o) {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  int rc = nb_device_info(dev, o);
  if (rc) return rc;
  if (g_inited) {
    o->my_pe = nvshmem_my_pe();
    o->n_pes = nvshmem_n_pes();
  }
  nvshmemx_vendor_get_version_info(&o->nvshmem_major, &o->nvshmem_minor, &o->nvshmem_patch);
  return 0;
}

extern "C" int nb_peer_path(int peer, int *path) {
  if (!g_inited) return fail(-1, "not initialised");
  void *p = nvshmem_ptr(g_dst, peer);
  if (p == nullptr) {
    *path = 2;
    return 0;
  }
  // Same device when the peer's buffer resolves to memory of our device
  // and our own device is the one the peer uses: compare device ordinals
  // through pointer attributes.
  cudaPointerAttributes at;
  CK(cudaPointerGetAttributes(&at, p));
  int dev = 0;
  CK(cudaGetDevice(&dev));
  *path = (peer == nvshmem_my_pe() || at.device == dev) ? 0 : 1;
  return 0;
}

extern "C" int nb_barrier(void) {
  if (!g_inited) return fail(-1, "not initialised");
  CK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  return 0;
}

// ---------------------------------------------------------------------------
// Verification pattern: byte i of PE pe's source under seed s.
__host__ __device__ static inline uint8_t pat(int64_t i, int pe, int64_t s) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)s << 17) ^ ((uint64_t)(pe + 1) * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 29;
  return (uint8_t)(x ^ (x >> 8));
}

__global__ void k_fill(uint8_t *b, int64_t n, int pe, int64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    b[i] = pat(i, pe, seed);
}

__global__ void k_poison(uint8_t *b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    b[i] = (uint8_t)(0xA5 ^ (i * 13));
}

__global__ void k_check(const uint8_t *b, int64_t n, int pe, int64_t seed, unsigned long long *bad,
                        unsigned long long *first) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (b[i] != pat(i, pe, seed)) {
      atomicAdd(bad, 1ull);
      atomicMin(first, (unsigned long long)i);
    }
  }
}

__global__ void k_zero_u64(uint64_t *b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = 0;
}

__global__ void k_check_u64(const uint64_t *b, int64_t n, uint64_t want, unsigned long long *bad,
                            unsigned long long *first) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (b[i] != want) {
      atomicAdd(bad, 1ull);
      atomicMin(first, (unsigned long long)i);
    }
  }
}

// ---------------------------------------------------------------------------
// Bulk put/get: the buffer is cut into one chunk per group (CTA, warp or
// thread), 16-byte aligned; the last chunks take the remainder, so every
// byte of size moves (perftest drops remainders).
__device__ static inline void chunk_of(int64_t size, int64_t groups, int64_t g, int64_t *off, int64_t *len) {
  int64_t c = (size + groups - 1) / groups;
  c = (c + 15) & ~15ll;
  int64_t o = g * c;
  if (o >= size) {
    *off = size;
    *len = 0;
    return;
  }
  *off = o;
  *len = (o + c <= size) ? c : size - o;
}

template <int OP, int SCOPE, int BLOCKING>
__global__ void k_bulk(uint8_t *dst, uint8_t *src, int64_t size, int iters, int peer) {
  int64_t groups, g;
  if (SCOPE == NB_SCOPE_BLOCK) {
    groups = gridDim.x;
    g = blockIdx.x;
  } else if (SCOPE == NB_SCOPE_WARP) {
    groups = (int64_t)gridDim.x * (blockDim.x / 32);
    g = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  } else {
    groups = (int64_t)gridDim.x * blockDim.x;
    g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  }
  int64_t off, len;
  chunk_of(size, groups, g, &off, &len);
  for (int it = 0; it < iters; it++) {
    if (len > 0) {
      if (OP == NB_OP_PUT) {
        if (SCOPE == NB_SCOPE_BLOCK) {
          if (BLOCKING) nvshmemx_putmem_block(dst + off, src + off, len, peer);
          else nvshmemx_putmem_nbi_block(dst + off, src + off, len, peer);
        } else if (SCOPE == NB_SCOPE_WARP) {
          if (BLOCKING) nvshmemx_putmem_warp(dst + off, src + off, len, peer);
          else nvshmemx_putmem_nbi_warp(dst + off, src + off, len, peer);
        } else {
          if (BLOCKING) nvshmem_putmem(dst + off, src + off, len, peer);
          else nvshmem_putmem_nbi(dst + off, src + off, len, peer);
        }
      } else {
        if (SCOPE == NB_SCOPE_BLOCK) {
          if (BLOCKING) nvshmemx_getmem_block(dst + off, src + off, len, peer);
          else nvshmemx_getmem_nbi_block(dst + off, src + off, len, peer);
        } else if (SCOPE == NB_SCOPE_WARP) {
          if (BLOCKING) nvshmemx_getmem_warp(dst + off, src + off, len, peer);
          else nvshmemx_getmem_nbi_warp(dst + off, src + off, len, peer);
        } else {
          if (BLOCKING) nvshmem_getmem(dst + off, src + off, len, peer);
          else nvshmem_getmem_nbi(dst + off, src + off, len, peer);
        }
      }
    }
  }
  if (!BLOCKING) nvshmem_quiet();
}

// Scalar p / g: thread t handles elements t, t+T, ... (coalesced).
template <typename T>
__device__ static inline void p1(T *d, T v, int pe);
template <> __device__ inline void p1<uint8_t>(uint8_t *d, uint8_t v, int pe) { nvshmem_uint8_p(d, v, pe); }
template <> __device__ inline void p1<uint16_t>(uint16_t *d, uint16_t v, int pe) { nvshmem_uint16_p(d, v, pe); }
template <> __device__ inline void p1<uint32_t>(uint32_t *d, uint32_t v, int pe) { nvshmem_uint32_p(d, v, pe); }
template <> __device__ inline void p1<uint64_t>(uint64_t *d, uint64_t v, int pe) { nvshmem_uint64_p(d, v, pe); }
template <typename T>
__device__ static inline T g1(const T *s, int pe);
template <> __device__ inline uint8_t g1<uint8_t>(const uint8_t *s, int pe) { return nvshmem_uint8_g(s, pe); }
template <> __device__ inline uint16_t g1<uint16_t>(const uint16_t *s, int pe) { return nvshmem_uint16_g(s, pe); }
template <> __device__ inline uint32_t g1<uint32_t>(const uint32_t *s, int pe) { return nvshmem_uint32_g(s, pe); }
template <> __device__ inline uint64_t g1<uint64_t>(const uint64_t *s, int pe) { return nvshmem_uint64_g(s, pe); }

template <typename T, int OP>
__global__ void k_scalar(T *dst, const T *src, int64_t n, int iters, int peer) {
  int64_t T0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int it = 0; it < iters; it++) {
    for (int64_t i = T0; i < n; i += stride) {
      if (OP == NB_OP_P) p1<T>(dst + i, src[i], peer);
      else dst[i] = g1<T>(src + i, peer);
    }
  }
  if (OP == NB_OP_P) nvshmem_quiet();
}

// Plain loads/stores through a mapped pointer: 16-byte vectors, a tail of
// bytes. Used for rma/st, rma/ld and the SM-copy limit.
__global__ void k_copy(uint8_t *__restrict__ dst, const uint8_t *__restrict__ src, int64_t size, int iters) {
  int64_t n16 = size / 16;
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const uint4 *s4 = (const uint4 *)src;
  uint4 *d4 = (uint4 *)dst;
  for (int it = 0; it < iters; it++) {
    int64_t i = t;
    for (; i + 3 * stride < n16; i += 4 * stride) {
      uint4 a = s4[i], b = s4[i + stride], c = s4[i + 2 * stride], d = s4[i + 3 * stride];
      d4[i] = a;
      d4[i + stride] = b;
      d4[i + 2 * stride] = c;
      d4[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride) d4[i] = s4[i];
    for (int64_t j = n16 * 16 + t; j < size; j += stride) dst[j] = src[j];
  }
}

// Atomics: thread t owns slot t of the peer's uint64 array.
template <int OP>
__global__ void k_atomic(uint64_t *slots, int iters, int peer, uint64_t base) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t cur = base;
  uint64_t sink = 0;
  for (int it = 0; it < iters; it++) {
    if (OP == NB_OP_FETCH_ADD) sink += nvshmem_uint64_atomic_fetch_add(slots + t, 1, peer);
    else if (OP == NB_OP_ADD) nvshmem_uint64_atomic_add(slots + t, 1, peer);
    else {
      uint64_t old = nvshmem_uint64_atomic_compare_swap(slots + t, cur, cur + 1, peer);
      cur = (old == cur) ? cur + 1 : old;
      sink += old;
    }
  }
  nvshmem_quiet();
  if (sink == 0xFFFFFFFFFFFFFFFFull) slots[0] = sink;  // keep the fetches alive
}

// The initiator tells the target how many operations it issued.
__global__ void k_put_i64(int64_t *dst, int64_t v, int pe) {
  nvshmem_int64_p(dst, v, pe);
  nvshmem_quiet();
}

// Adds a PE's verification counts to PE 0's counters.
__global__ void k_add_i64(int64_t *red, int64_t errors, int64_t checked) {
  nvshmem_uint64_atomic_add((uint64_t *)red, (uint64_t)errors, 0);
  nvshmem_uint64_atomic_add((uint64_t *)red + 1, (uint64_t)checked, 0);
  nvshmem_quiet();
}

// ---------------------------------------------------------------------------
static int launch(const nb_rma_args *a, int peer, int iters, uint64_t atomic_base) {
  dim3 g(a->ctas), b(a->threads);
  cudaStream_t s = g_stream;
  switch (a->op) {
  case NB_OP_PUT:
  case NB_OP_GET: {
    uint8_t *dst = g_dst, *src = g_src;
#define BULK(OPV, SC)                                                                        \
  if (a->blocking) k_bulk<OPV, SC, 1><<<g, b, 0, s>>>(dst, src, a->size, iters, peer);        \
  else k_bulk<OPV, SC, 0><<<g, b, 0, s>>>(dst, src, a->size, iters, peer);
    if (a->op == NB_OP_PUT) {
      if (a->scope == NB_SCOPE_BLOCK) { BULK(NB_OP_PUT, NB_SCOPE_BLOCK) }
      else if (a->scope == NB_SCOPE_WARP) { BULK(NB_OP_PUT, NB_SCOPE_WARP) }
      else { BULK(NB_OP_PUT, NB_SCOPE_THREAD) }
    } else {
      if (a->scope == NB_SCOPE_BLOCK) { BULK(NB_OP_GET, NB_SCOPE_BLOCK) }
      else if (a->scope == NB_SCOPE_WARP) { BULK(NB_OP_GET, NB_SCOPE_WARP) }
      else { BULK(NB_OP_GET, NB_SCOPE_THREAD) }
    }
#undef BULK
    CKLAUNCH("bulk put/get kernel");
    return 0;
  }
  case NB_OP_P:
  case NB_OP_G: {
    int64_t n = a->size / a->elem;
#define SCALAR(T)                                                                                       \
  if (a->op == NB_OP_P) k_scalar<T, NB_OP_P><<<g, b, 0, s>>>((T *)g_dst, (const T *)g_src, n, iters, peer); \
  else k_scalar<T, NB_OP_G><<<g, b, 0, s>>>((T *)g_dst, (const T *)g_src, n, iters, peer);
    switch (a->elem) {
    case 1: SCALAR(uint8_t) break;
    case 2: SCALAR(uint16_t) break;
    case 4: SCALAR(uint32_t) break;
    case 8: SCALAR(uint64_t) break;
    default: return fail(-1, "element size %d: want 1, 2, 4 or 8", a->elem);
    }
#undef SCALAR
    CKLAUNCH("scalar p/g kernel");
    return 0;
  }
  case NB_OP_ST:
  case NB_OP_SM_COPY: {
    uint8_t *rd = (uint8_t *)nvshmem_ptr(g_dst, peer);
    if (!rd) return fail(-2, "PE %d is not reachable by load/store (no P2P mapping)", peer);
    k_copy<<<g, b, 0, s>>>(rd, g_src, a->size, iters);
    CKLAUNCH("store copy kernel");
    return 0;
  }
  case NB_OP_LD:
  case NB_OP_SM_COPY_READ: {
    const uint8_t *rs = (const uint8_t *)nvshmem_ptr(g_src, peer);
    if (!rs) return fail(-2, "PE %d is not reachable by load/store (no P2P mapping)", peer);
    k_copy<<<g, b, 0, s>>>(g_dst, rs, a->size, iters);
    CKLAUNCH("load copy kernel");
    return 0;
  }
  case NB_OP_CE_COPY: {
    uint8_t *rd = (uint8_t *)nvshmem_ptr(g_dst, peer);
    if (!rd) return fail(-2, "PE %d is not reachable by load/store (no P2P mapping)", peer);
    for (int i = 0; i < iters; i++) CK(cudaMemcpyAsync(rd, g_src, a->size, cudaMemcpyDeviceToDevice, s));
    return 0;
  }
  case NB_OP_FETCH_ADD:
    k_atomic<NB_OP_FETCH_ADD><<<g, b, 0, s>>>((uint64_t *)g_dst, iters, peer, atomic_base);
    CKLAUNCH("atomic kernel");
    return 0;
  case NB_OP_ADD:
    k_atomic<NB_OP_ADD><<<g, b, 0, s>>>((uint64_t *)g_dst, iters, peer, atomic_base);
    CKLAUNCH("atomic kernel");
    return 0;
  case NB_OP_CSWAP:
    k_atomic<NB_OP_CSWAP><<<g, b, 0, s>>>((uint64_t *)g_dst, iters, peer, atomic_base);
    CKLAUNCH("atomic kernel");
    return 0;
  }
  return fail(-1, "unknown op %d", a->op);
}

static bool is_atomic(int op) { return op == NB_OP_FETCH_ADD || op == NB_OP_ADD || op == NB_OP_CSWAP; }
// Ops whose destination is written on the target PE (put side); the others
// land in the initiator's own buffer (get side).
static bool writes_remote(int op) {
  return op == NB_OP_PUT || op == NB_OP_P || op == NB_OP_ST || op == NB_OP_SM_COPY || op == NB_OP_CE_COPY || is_atomic(op);
}

static int check_bytes(int64_t size, int src_pe, int64_t seed, nb_rma_result *r) {
  unsigned long long h[2] = {0, ~0ull};
  CK(cudaMemcpy(g_count, &h[0], sizeof h[0], cudaMemcpyHostToDevice));
  unsigned long long *first;
  CK(cudaMalloc(&first, sizeof *first));
  CK(cudaMemcpy(first, &h[1], sizeof h[1], cudaMemcpyHostToDevice));
  k_check<<<1024, 256, 0, g_stream>>>(g_dst, size, src_pe, seed, g_count, first);
  CKLAUNCH("check kernel");
  CK(cudaStreamSynchronize(g_stream));
  CK(cudaMemcpy(&h[0], g_count, sizeof h[0], cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&h[1], first, sizeof h[1], cudaMemcpyDeviceToHost));
  cudaFree(first);
  r->checked += size;
  r->errors += (int64_t)h[0];
  if (h[0] && !r->detail[0]) {
    uint8_t got = 0;
    cudaMemcpy(&got, g_dst + h[1], 1, cudaMemcpyDeviceToHost);
    snprintf(r->detail, sizeof r->detail, "byte %llu: got 0x%02x, want 0x%02x (pattern of PE %d, seed %lld)", h[1], got,
             pat((int64_t)h[1], src_pe, seed), src_pe, (long long)seed);
  }
  return 0;
}

static int check_u64(int64_t n, uint64_t want, nb_rma_result *r) {
  unsigned long long h[2] = {0, ~0ull};
  CK(cudaMemcpy(g_count, &h[0], sizeof h[0], cudaMemcpyHostToDevice));
  unsigned long long *first;
  CK(cudaMalloc(&first, sizeof *first));
  CK(cudaMemcpy(first, &h[1], sizeof h[1], cudaMemcpyHostToDevice));
  k_check_u64<<<256, 256, 0, g_stream>>>((const uint64_t *)g_dst, n, want, g_count, first);
  CKLAUNCH("atomic check kernel");
  CK(cudaStreamSynchronize(g_stream));
  CK(cudaMemcpy(&h[0], g_count, sizeof h[0], cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&h[1], first, sizeof h[1], cudaMemcpyDeviceToHost));
  cudaFree(first);
  r->checked += n;
  r->errors += (int64_t)h[0];
  if (h[0] && !r->detail[0]) {
    uint64_t got = 0;
    cudaMemcpy(&got, (uint64_t *)g_dst + h[1], 8, cudaMemcpyDeviceToHost);
    snprintf(r->detail, sizeof r->detail, "counter %llu: got %llu, want %llu", h[1], (unsigned long long)got,
             (unsigned long long)want);
  }
  return 0;
}

static int reduce_checks(nb_rma_result *res, int me);

extern "C" int nb_rma_run(const nb_rma_args *a, double *samples_out, nb_rma_result *res) {
  memset(res, 0, sizeof *res);
  if (!g_inited) return fail(-1, "not initialised");
  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (a->peer < 0 || a->peer >= npes) return fail(-1, "peer %d out of range (%d PEs)", a->peer, npes);
  if (a->size <= 0 || a->size > g_buf) return fail(-1, "size %lld outside 1..%lld", (long long)a->size, (long long)g_buf);
  if (a->ctas <= 0 || a->threads <= 0 || a->threads > 1024) return fail(-1, "launch %d x %d is invalid", a->ctas, a->threads);
  if (a->iters < 0 || a->samples <= 0 || a->warmup < 0) return fail(-1, "iters must be >= 0 (0: calibrate), samples > 0, warmup >= 0");
  if ((a->op == NB_OP_P || a->op == NB_OP_G) && (a->size % a->elem)) return fail(-1, "size %lld is not a multiple of the element size %d", (long long)a->size, a->elem);
  bool atomic = is_atomic(a->op);
  int64_t nslots = (int64_t)a->ctas * a->threads;
  if (atomic && nslots * 8 > g_buf) return fail(-1, "too many threads for the atomic slots");

  // Roles: PE 0 initiates towards a->peer; with bidir the peer initiates
  // towards PE 0 at the same time. A PE talking to itself is both.
  int peer_of_me = -1;
  if (me == 0) peer_of_me = a->peer;
  else if (a->bidir && me == a->peer) peer_of_me = 0;
  bool initiator = peer_of_me >= 0;
  res->initiator = initiator;

  // Prepare: every PE fills its source with its pattern and poisons its
  // destination (atomics: zero the counters), then all PEs sync.
  int fillgrid = 1024;
  if (atomic) {
    k_zero_u64<<<256, 256, 0, g_stream>>>((uint64_t *)g_dst, nslots);
  } else {
    k_fill<<<fillgrid, 256, 0, g_stream>>>(g_src, a->size, me, a->seed);
    if (a->verify) k_poison<<<fillgrid, 256, 0, g_stream>>>(g_dst, a->size);
  }
  CKLAUNCH("fill kernels");
  CK(cudaStreamSynchronize(g_stream));
  nvshmem_barrier_all();

  // ops counts the operations issued so far (atomics verify against it).
  uint64_t ops = 0;
  int iters = a->iters;
  if (initiator) {
    if (iters <= 0) {
      // Calibrate: one launch of one operation, then enough operations per
      // launch for about 20 ms (launch overhead amortised, time bounded).
      CK(cudaEventRecord(g_ev0, g_stream));
      int rc = launch(a, peer_of_me, 1, ops);
      if (rc) return rc;
      ops += 1;
      CK(cudaEventRecord(g_ev1, g_stream));
      CK(cudaEventSynchronize(g_ev1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
      double n = 20.0 / (ms > 1e-4 ? ms : 1e-4);
      iters = n < 1 ? 1 : (n > 1000 ? 1000 : (int)n);
    }
    for (int w = 0; w < a->warmup; w++) {
      int rc = launch(a, peer_of_me, iters, ops);
      if (rc) return rc;
      ops += iters;
    }
    for (int sIdx = 0; sIdx < a->samples; sIdx++) {
      CK(cudaEventRecord(g_ev0, g_stream));
      int rc = launch(a, peer_of_me, iters, ops);
      if (rc) return rc;
      ops += iters;
      CK(cudaEventRecord(g_ev1, g_stream));
      CK(cudaEventSynchronize(g_ev1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
      double per = (double)ms * 1e-3 / iters;
      if (atomic) per /= (double)nslots;  // seconds per atomic operation
      samples_out[sIdx] = per;
    }
    CK(cudaStreamSynchronize(g_stream));
    res->bytes = atomic ? 8 : a->size;
    res->iters = iters;
  }
  // The operation count reaches the checking PE for the atomic check.
  static int64_t *g_ops = nullptr;
  if (!g_ops) g_ops = (int64_t *)nvshmem_malloc(sizeof(int64_t));
  if (!g_ops) return fail(-1, "nvshmem_malloc of the op counter failed");
  if (initiator && atomic) {
    k_put_i64<<<1, 1, 0, g_stream>>>(g_ops, (int64_t)ops, peer_of_me);
    CKLAUNCH("op counter put");
    CK(cudaStreamSynchronize(g_stream));
  }
  nvshmem_barrier_all();

  if (a->verify) {
    // Who holds the landed data: the target for put-side ops, the initiator
    // for get-side ops. Each PE checks its own destination.
    bool check = false;
    int src_pe = -1;
    if (writes_remote(a->op)) {
      // I am a target if someone initiated towards me.
      if (me == a->peer) { check = true; src_pe = 0; }
      if (a->bidir && me == 0) { check = true; src_pe = a->peer; }
    } else if (initiator) {
      check = true;
      src_pe = peer_of_me;
    }
    if (check) {
      if (atomic) {
        // Every counter saw one increment per operation of the initiator.
        int64_t total = 0;
        CK(cudaMemcpy(&total, g_ops, sizeof total, cudaMemcpyDeviceToHost));
        int rc = check_u64(nslots, (uint64_t)total, res);
        if (rc) return rc;
      } else {
        int rc = check_bytes(a->size, src_pe, a->seed, res);
        if (rc) return rc;
      }
    }
  }
  return reduce_checks(res, me);
}

// reduce_checks sums every PE's verification counts into PE 0's result.
static int reduce_checks(nb_rma_result *res, int me) {
  static int64_t *g_red = nullptr;
  if (!g_red) {
    g_red = (int64_t *)nvshmem_malloc(2 * sizeof(int64_t));
    if (!g_red) return fail(-1, "nvshmem_malloc of the verification counters failed");
    CK(cudaMemset(g_red, 0, 2 * sizeof(int64_t)));
    nvshmem_barrier_all();
  }
  if (res->checked > 0) {
    k_add_i64<<<1, 1, 0, g_stream>>>(g_red, res->errors, res->checked);
    CKLAUNCH("verification counter add");
    CK(cudaStreamSynchronize(g_stream));
  }
  nvshmem_barrier_all();
  if (me == 0) {
    int64_t h[2];
    CK(cudaMemcpy(h, g_red, sizeof h, cudaMemcpyDeviceToHost));
    res->job_errors = h[0];
    res->job_checked = h[1];
    CK(cudaMemset(g_red, 0, sizeof h));
  }
  nvshmem_barrier_all();
  return 0;
}

#include "latency.cuh"
#include "collectives.cuh"
