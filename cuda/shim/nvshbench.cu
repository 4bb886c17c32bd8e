// nvshbench.cu: the C ABI of libnvshbench.so (see nvshbench.h), the state
// every point shares, and the one measurement loop (nb_run) that every
// benchmark runs through. The operations themselves are entries of one
// dispatch table, defined beside their kernels in rma.cuh, latency.cuh and
// collectives.cuh. Every NVSHMEM / CUDA / NCCL call of the tool lives in
// this library.
//
// The multi-PE rule: every host call that all PEs must make together
// (symmetric allocation, barriers, exchanges, NCCL communicator creation)
// is made here, by nb_init, nb_job, nb_agree and nb_run, in one order on
// every PE whatever the operation, size or outcome. A PE that fails keeps
// making those calls and reports its failure at the next agreement, where
// every PE learns it; no PE returns early between two collective calls.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <type_traits>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvshbench.h"

static char g_err[1024];

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  return code;
}

#define CK(call)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess)                                                                        \
      return fail(NB_ERR, "%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__);  \
  } while (0)

#define CKLAUNCH(what)                                                                            \
  do {                                                                                            \
    cudaError_t e_ = cudaGetLastError();                                                          \
    if (e_ != cudaSuccess) return fail(NB_ERR, "launch of %s: %s", what, cudaGetErrorString(e_)); \
  } while (0)

#define NB_MAX_CTAS 1024
#define NB_SLOT 512             // bytes per PE in one exchange
#define NB_MAX_ITERS 100000     // per launch
#define NB_CHAIN_BYTES (256LL << 20)  // pointer chases walk this much of the peer's memory

// Everything nb_init makes, once, in the same order on every PE.
struct State {
  int inited;
  int me, npes, device;
  int64_t buf;                // bytes of each of src, dst, scratch
  uint8_t *src, *dst, *scratch;  // symmetric
  uint64_t *flag;             // symmetric: 2 signal words (ping-pong)
  uint64_t *cflags;           // symmetric: NB_MAX_PES x NB_MAX_CTAS barrier words (our AllReduce)
  uint8_t *xchg;              // symmetric: 2 halves x NB_MAX_PES x NB_SLOT (exchanges)
  int xhalf;
  uint8_t *stage;             // device: NB_SLOT bytes staged for an exchange
  unsigned long long *count;  // device: [0] mismatches, [1] first mismatch
  int64_t *times;             // device: per-iteration ns of the last launch (NB_MAX_ITERS)
  int64_t *cursor;            // device: pointer-chase cursor, continued across launches
  uint64_t *epochs;           // device: per-CTA barrier epochs of our AllReduce
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
};
static State S;

// on_device makes this PE's device current on the calling thread. The CUDA
// runtime keeps the current device per thread, and a Go program may call in
// from any of its threads: every entry point after nb_init starts here.
static int on_device(void) {
  if (!S.inited) return fail(NB_ERR, "not initialised");
  CK(cudaSetDevice(S.device));
  return 0;
}

extern "C" int nb_abi_version(void) { return NB_ABI_VERSION; }
extern "C" const char *nb_last_error(void) { return g_err; }

extern "C" int nb_device_count(int *count) {
  CK(cudaGetDeviceCount(count));
  return 0;
}

static int nccl_version_loaded(void);

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
  gethostname(o->host, sizeof o->host - 1);
  o->my_pe = -1;
  return 0;
}

extern "C" int nb_can_access_peer(int dev, int peer, int *can) {
  CK(cudaDeviceCanAccessPeer(can, dev, peer));
  return 0;
}

extern "C" int nb_get_uniqueid(uint8_t *uid, int len) {
  nvshmemx_uniqueid_t id;
  if (len < (int)sizeof id) return fail(NB_ERR, "unique id buffer too small: %d < %zu", len, sizeof id);
  int rc = nvshmemx_get_uniqueid(&id);
  if (rc != 0) return fail(NB_ERR, "nvshmemx_get_uniqueid failed: %d", rc);
  memcpy(uid, &id, sizeof id);
  return (int)sizeof id;
}

// ---------------------------------------------------------------------------
// Exchanges: every PE puts its NB_SLOT-byte slot into every PE's copy of the
// exchange area, then all meet in a barrier. Two halves alternate, so a PE
// that runs ahead into the next exchange never overwrites a slot another PE
// is still reading (it cannot pass that PE's next barrier).
__global__ void k_xput(uint8_t *half, const uint8_t *mine, int len, int me, int npes) {
  for (int q = 0; q < npes; q++) nvshmem_putmem(half + (size_t)me * NB_SLOT, mine, len, q);
  nvshmem_quiet();
}

// exchange is collective: out[pe * len ...] gets every PE's len bytes. It
// makes its barrier even when this PE's part failed, and says so after.
static int exchange(const void *mine, int len, void *out) {
  uint8_t *half = S.xchg + (size_t)S.xhalf * NB_MAX_PES * NB_SLOT;
  S.xhalf ^= 1;
  int rc = 0;
  cudaError_t e = cudaMemcpy(S.stage, mine, len, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    k_xput<<<1, 1, 0, S.stream>>>(half, S.stage, len, S.me, S.npes);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(S.stream);
  }
  if (e != cudaSuccess) rc = fail(NB_ERR, "exchange: %s", cudaGetErrorString(e));
  nvshmem_barrier_all();
  if (rc) return rc;
  for (int q = 0; q < S.npes; q++) CK(cudaMemcpy((uint8_t *)out + (size_t)q * len, half + (size_t)q * NB_SLOT, len, cudaMemcpyDeviceToHost));
  return 0;
}

// A PE's status at an agreement: its code and message.
struct Verdict {
  int32_t status;
  int32_t pe;
  int64_t errors;   // verification counts and payload (the last agreement of a point)
  int64_t checked;
  int64_t bytes;
  int64_t value;    // a value every PE takes from PE 0 (the calibrated iteration count)
  char msg[NB_SLOT - 40];
};
static_assert(sizeof(Verdict) <= NB_SLOT, "a verdict must fit an exchange slot");

// agree is collective: every PE learns every PE's status. It returns the
// worst (an error before a non-capturable point before an unreachable one)
// and makes its message this PE's last error, naming the PE it came from.
// sums gets the verification counts and the payload summed over the job
// (3 values) when non-null; value, when non-null, carries this PE's value
// in and PE 0's out.
static int agree(int st, int64_t errors, int64_t checked, int64_t bytes, nb_result *res, int64_t *sums, int64_t *value = nullptr) {
  static Verdict all[NB_MAX_PES];
  Verdict v;
  memset(&v, 0, sizeof v);
  v.status = st;
  v.pe = S.me;
  v.errors = errors;
  v.checked = checked;
  v.bytes = bytes;
  if (value) v.value = *value;
  if (st) snprintf(v.msg, sizeof v.msg, "%s", g_err);
  int rc = exchange(&v, sizeof v, all);
  if (rc) return rc;
  if (value) *value = all[0].value;
  int worst = 0, who = -1;
  int64_t e = 0, c = 0, b = 0;
  for (int q = 0; q < S.npes; q++) {
    e += all[q].errors;
    c += all[q].checked;
    b += all[q].bytes;
    int s = all[q].status;
    if (!s) continue;
    int rank = s == NB_ERR ? 3 : (s == NB_NOT_CAPTURABLE ? 2 : 1);
    int wrank = worst == 0 ? 0 : (worst == NB_ERR ? 3 : (worst == NB_NOT_CAPTURABLE ? 2 : 1));
    if (rank > wrank) worst = s, who = q;
  }
  if (sums) sums[0] = e, sums[1] = c, sums[2] = b;
  if (!worst) return 0;
  if (res) res->failed_pe = who;
  if (who != S.me) fail(worst, "PE %d: %s", who, all[who].msg);
  return worst;
}

// ---------------------------------------------------------------------------
extern "C" int nb_init(int mode, int rank, int nranks, const uint8_t *uid, int uidlen, int device, int64_t heap) {
  if (S.inited) return fail(NB_ERR, "already initialised");
  if (heap <= 0) return fail(NB_ERR, "heap %lld: must be positive", (long long)heap);
  CK(cudaSetDevice(device));
  // The symmetric heap holds the source, destination and scratch buffers,
  // the small shared words, plus NVSHMEM's own reserves.
  if (getenv("NVSHMEM_SYMMETRIC_SIZE") == nullptr) {
    char v[64];
    snprintf(v, sizeof v, "%lld", (long long)(3 * heap + (512LL << 20)));
    setenv("NVSHMEM_SYMMETRIC_SIZE", v, 1);
  }
  if (mode == 0) {
    nvshmemx_uniqueid_t id;
    if (uidlen != (int)sizeof id) return fail(NB_ERR, "unique id has %d bytes, want %zu", uidlen, sizeof id);
    memcpy(&id, uid, sizeof id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (rc != 0) return fail(NB_ERR, "nvshmemx_set_attr_uniqueid_args: %d", rc);
    rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0) return fail(NB_ERR, "nvshmemx_init_attr (unique id bootstrap): %d", rc);
  } else {
    nvshmem_init();
  }
  S.inited = 1;
  S.me = nvshmem_my_pe();
  S.npes = nvshmem_n_pes();
  S.device = device;
  S.buf = heap;
  if (S.npes > NB_MAX_PES) return fail(NB_ERR, "%d PEs: at most %d", S.npes, NB_MAX_PES);
  // Every symmetric allocation of the tool, here and in this order.
  S.src = (uint8_t *)nvshmem_malloc(heap);
  S.dst = (uint8_t *)nvshmem_malloc(heap);
  S.scratch = (uint8_t *)nvshmem_malloc(heap);
  S.flag = (uint64_t *)nvshmem_malloc(2 * sizeof(uint64_t));
  S.cflags = (uint64_t *)nvshmem_malloc(sizeof(uint64_t) * NB_MAX_PES * NB_MAX_CTAS);
  S.xchg = (uint8_t *)nvshmem_malloc(2 * NB_MAX_PES * NB_SLOT);
  if (!S.src || !S.dst || !S.scratch || !S.flag || !S.cflags || !S.xchg)
    return fail(NB_ERR, "nvshmem_malloc of 3 x %lld bytes failed (NVSHMEM_SYMMETRIC_SIZE too small?)", (long long)heap);
  CK(cudaMalloc(&S.stage, NB_SLOT));
  CK(cudaMalloc(&S.count, 2 * sizeof *S.count));
  CK(cudaMalloc(&S.times, NB_MAX_ITERS * sizeof(int64_t)));
  CK(cudaMalloc(&S.cursor, sizeof(int64_t)));
  CK(cudaMalloc(&S.epochs, sizeof(uint64_t) * NB_MAX_CTAS));
  CK(cudaMemset(S.cflags, 0, sizeof(uint64_t) * NB_MAX_PES * NB_MAX_CTAS));
  CK(cudaMemset(S.flag, 0, 2 * sizeof(uint64_t)));
  CK(cudaMemset(S.epochs, 0, sizeof(uint64_t) * NB_MAX_CTAS));
  CK(cudaStreamCreateWithFlags(&S.stream, cudaStreamNonBlocking));
  CK(cudaEventCreate(&S.ev0));
  CK(cudaEventCreate(&S.ev1));
  CK(cudaDeviceSynchronize());
  nccl_version_loaded();  // dlopen NCCL now (local), so nb_job reports it
  nvshmem_barrier_all();
  return 0;
}

static void mpi_finalize(void);
static void nd_finalize(void);

extern "C" int nb_finalize(void) {
  if (!S.inited) return 0;
  cudaSetDevice(S.device);
  cudaDeviceSynchronize();
  nvshmem_barrier_all();
  nd_finalize();
  nvshmem_free(S.xchg);
  nvshmem_free(S.cflags);
  nvshmem_free(S.flag);
  nvshmem_free(S.scratch);
  nvshmem_free(S.dst);
  nvshmem_free(S.src);
  cudaFree(S.stage);
  cudaFree(S.count);
  cudaFree(S.times);
  cudaFree(S.cursor);
  cudaFree(S.epochs);
  cudaEventDestroy(S.ev0);
  cudaEventDestroy(S.ev1);
  cudaStreamDestroy(S.stream);
  nvshmem_finalize();
  mpi_finalize();
  S.inited = 0;
  return 0;
}

// path_to says how this PE reaches PE q: its own GPU, a load/store mapping
// to another GPU, or only a remote transport.
static int path_to(int q) {
  void *p = nvshmem_ptr(S.dst, q);
  if (p == nullptr) return NB_PATH_REMOTE;
  if (q == S.me) return NB_PATH_LOCAL;
  cudaPointerAttributes at;
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return NB_PATH_P2P;
  }
  return at.device == S.device ? NB_PATH_LOCAL : NB_PATH_P2P;
}

static int info_fill(nb_info *o) {
  int rc = nb_device_info(S.device, o);
  if (rc) return rc;
  o->my_pe = S.me;
  o->n_pes = S.npes;
  nvshmemx_vendor_get_version_info(&o->nvshmem_major, &o->nvshmem_minor, &o->nvshmem_patch);
  o->nccl_version = nccl_version_loaded();
  return 0;
}

extern "C" int nb_job(nb_info *all, int max, int32_t *paths) {
  if (int rc = on_device()) return rc;
  if (max < S.npes) return fail(NB_ERR, "room for %d PEs, the job has %d", max, S.npes);
  static_assert(sizeof(nb_info) <= NB_SLOT, "nb_info must fit an exchange slot");
  nb_info mine;
  int rc = info_fill(&mine);
  int rc2 = exchange(&mine, sizeof mine, all);  // always: every PE makes the same calls
  int32_t row[NB_MAX_PES];
  for (int q = 0; q < S.npes; q++) row[q] = path_to(q);
  static int32_t rows[NB_MAX_PES * NB_MAX_PES];
  int rc3 = exchange(row, S.npes * (int)sizeof(int32_t), rows);
  if (rc || rc2 || rc3) return rc ? rc : (rc2 ? rc2 : rc3);
  memcpy(paths, rows, sizeof(int32_t) * S.npes * S.npes);
  return S.npes;
}

extern "C" int nb_agree(int64_t mine, int64_t *values, int max) {
  if (int rc = on_device()) return rc;
  if (max < S.npes) return fail(NB_ERR, "room for %d PEs, the job has %d", max, S.npes);
  int rc = exchange(&mine, sizeof mine, values);
  return rc ? rc : S.npes;
}

extern "C" int nb_setenv(const char *name, const char *value) {
  if (setenv(name, value, 1) != 0) return fail(NB_ERR, "setenv %s failed", name);
  return 0;
}

extern "C" int nb_bootstrap_probe(const char *plugin) {
  void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!h) return fail(NB_UNREACHABLE, "%s", dlerror());
  dlclose(h);
  return 0;
}

// mpi_finalize ends MPI where NVSHMEM's MPI bootstrap started it and left it
// running: Open MPI's mpirun counts a rank that exits without MPI_Finalize
// as an abnormal termination, so a clean run would fail the job.
static void mpi_finalize(void) {
  const char *libs[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
  for (const char *l : libs) {
    void *h = dlopen(l, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    int (*initialized)(int *) = (int (*)(int *))dlsym(h, "MPI_Initialized");
    int (*finalized)(int *) = (int (*)(int *))dlsym(h, "MPI_Finalized");
    int (*finalize)(void) = (int (*)(void))dlsym(h, "MPI_Finalize");
    int i = 0, f = 0;
    if (initialized && finalized && finalize && initialized(&i) == 0 && i && finalized(&f) == 0 && !f) finalize();
    dlclose(h);
    return;
  }
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

// base: the offset in the source that b[0] came from.
__global__ void k_check(const uint8_t *b, int64_t n, int64_t base, int pe, int64_t seed, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (b[i] != pat(base + i, pe, seed)) {
      atomicAdd(cnt, 1ull);
      atomicMin(cnt + 1, (unsigned long long)i);
    }
  }
}

__global__ void k_zero_u64(uint64_t *b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = 0;
}

__global__ void k_check_u64(const uint64_t *b, int64_t n, uint64_t want, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (b[i] != want) {
      atomicAdd(cnt, 1ull);
      atomicMin(cnt + 1, (unsigned long long)i);
    }
  }
}

static int count_reset(void) {
  unsigned long long h[2] = {0, ~0ull};
  CK(cudaMemcpy(S.count, h, sizeof h, cudaMemcpyHostToDevice));
  return 0;
}

static int count_read(unsigned long long h[2]) {
  CK(cudaStreamSynchronize(S.stream));
  CK(cudaMemcpy(h, S.count, 2 * sizeof h[0], cudaMemcpyDeviceToHost));
  return 0;
}

// check_bytes checks n bytes of buf against src_pe's pattern from offset base.
static int check_bytes(const uint8_t *buf, int64_t n, int64_t base, int src_pe, int64_t seed, nb_result *r) {
  int rc = count_reset();
  if (rc) return rc;
  k_check<<<1024, 256, 0, S.stream>>>(buf, n, base, src_pe, seed, S.count);
  CKLAUNCH("check kernel");
  unsigned long long h[2];
  if ((rc = count_read(h))) return rc;
  r->checked += n;
  r->errors += (int64_t)h[0];
  if (h[0] && !r->detail[0]) {
    uint8_t got = 0;
    cudaMemcpy(&got, buf + h[1], 1, cudaMemcpyDeviceToHost);
    snprintf(r->detail, sizeof r->detail, "byte %llu: got 0x%02x, want 0x%02x (pattern of PE %d, seed %lld)", h[1], got,
             pat(base + (int64_t)h[1], src_pe, seed), src_pe, (long long)seed);
  }
  return 0;
}

// check_u64 checks n counters of buf against want.
static int check_u64(const uint64_t *buf, int64_t n, uint64_t want, nb_result *r) {
  int rc = count_reset();
  if (rc) return rc;
  k_check_u64<<<256, 256, 0, S.stream>>>(buf, n, want, S.count);
  CKLAUNCH("counter check kernel");
  unsigned long long h[2];
  if ((rc = count_read(h))) return rc;
  r->checked += n;
  r->errors += (int64_t)h[0];
  if (h[0] && !r->detail[0]) {
    uint64_t got = 0;
    cudaMemcpy(&got, buf + h[1], 8, cudaMemcpyDeviceToHost);
    snprintf(r->detail, sizeof r->detail, "counter %llu: got %llu, want %llu", h[1], (unsigned long long)got,
             (unsigned long long)want);
  }
  return 0;
}

static int fill_src(int64_t n, int64_t seed) {
  k_fill<<<1024, 256, 0, S.stream>>>(S.src, n, S.me, seed);
  CKLAUNCH("fill kernel");
  return 0;
}

static int poison_dst(int64_t n) {
  k_poison<<<1024, 256, 0, S.stream>>>(S.dst, n);
  CKLAUNCH("poison kernel");
  return 0;
}

// ---------------------------------------------------------------------------
// The dispatch table. A family holds what its operations share (who runs,
// how they are prepared and checked); an entry is one operation's launch.

struct OpEntry;

// with_scope calls f with args.scope as a compile-time constant
// (std::integral_constant), with_flag with a 0/1 flag as one: the one way a
// launch picks its kernel instantiation.
template <typename F>
static void with_scope(int scope, F f) {
  if (scope == NB_SCOPE_BLOCK) f(std::integral_constant<int, NB_SCOPE_BLOCK>{});
  else if (scope == NB_SCOPE_WARP) f(std::integral_constant<int, NB_SCOPE_WARP>{});
  else f(std::integral_constant<int, NB_SCOPE_THREAD>{});
}

template <typename F>
static void with_flag(int v, F f) {
  if (v) f(std::integral_constant<int, 1>{});
  else f(std::integral_constant<int, 0>{});
}

// Args are a point's arguments as the shim's code sees them: the ABI's, and
// the operation's code (from its table entry) for the kernels' templates
// and the families' branches.
struct Args : nb_args {
  int op;
};

// Run is one point in progress: its arguments and what the loop knows.
struct Run {
  const Args *a;
  const OpEntry *e;
  int initiator;   // this PE issues and times
  int target;      // the PE this PE issues towards (initiators)
  int64_t ops;     // operations each active PE launched so far (agreed counts)
  void *comm;      // collectives: the NCCL communicator
};

struct Family {
  const char *name;
  // validate checks the arguments on this PE (no collective calls).
  int (*validate)(Run *r);
  // active: this PE launches (and, if initiator, times).
  int (*active)(Run *r);
  int (*synced)(Run *r);  // all PEs start every launch together (a barrier before each)
  int cal_iters;       // operations in the calibration launch (0: none)
  int default_iters;   // iterations per launch when not calibrated and not given
  double (*per_op)(Run *r);  // operations per iteration (atomics: one per thread)
  int (*prepare)(Run *r);    // local: fill, poison, reset
  int (*setup)(Run *r);      // collective on every PE after the first agreement (may be null)
  int (*before_launch)(Run *r);  // local, before the barrier of a synchronised launch (may be null)
  int (*check)(Run *r, nb_result *res);  // local, after every launch
  int64_t (*bytes)(Run *r);        // payload this PE moved per operation
  int64_t (*work_set)(Run *r);     // bytes the point touches on the busiest GPU
};

struct OpEntry {
  int op;            // the family's private code (NB_OP_* of its file)
  const char *name;  // the name the Go side asks for (nb_args.op)
  const Family *family;
  int lands;  // where the result lands (family-specific LANDS_*)
  int (*launch)(Run *r, int iters);
};

#include "rma.cuh"
#include "latency.cuh"
#include "collectives.cuh"
#include "nccldev.cuh"

// nd_finalize releases the NCCL device API's objects (every PE made them).
static void nd_finalize(void) {
#if NB_NCCL_DEVICE
  nd_release();
#endif
}

// The dispatch table: every family's entries, looked up by name.
struct OpTable {
  const OpEntry *entries;
  size_t n;
};
#define NB_TABLE(t) {t, sizeof t / sizeof t[0]}
static const OpTable kTables[] = {NB_TABLE(kRMAOps), NB_TABLE(kLatOps), NB_TABLE(kCollOps), NB_TABLE(kNDOps), NB_TABLE(kNDLatOps)};
#undef NB_TABLE

static const OpEntry *find_op(const char *name) {
  for (const OpTable &t : kTables)
    for (size_t i = 0; i < t.n; i++)
      if (strncmp(t.entries[i].name, name, NB_OP_NAME) == 0) return &t.entries[i];
  return nullptr;
}

// timed_launch times one launch of iters operations. gate: the PEs start it
// together on the device (an on-stream barrier before the first event), so
// a PE whose host thread is late to enqueue (a busy core under mpirun's
// binding) delays only the untimed barrier, not the other PE's timed work.
static int timed_launch(Run *r, int iters, cudaGraphExec_t gexec, int gate, float *ms) {
  if (gate) {
    nvshmemx_barrier_all_on_stream(S.stream);
    CKLAUNCH("start gate (on-stream barrier)");
  }
  CK(cudaEventRecord(S.ev0, S.stream));
  if (gexec) CK(cudaGraphLaunch(gexec, S.stream));
  else {
    int rc = r->e->launch(r, iters);
    if (rc) return rc;
  }
  CK(cudaEventRecord(S.ev1, S.stream));
  CK(cudaEventSynchronize(S.ev1));
  CK(cudaEventElapsedTime(ms, S.ev0, S.ev1));
  return 0;
}

// read_times appends the per-iteration in-kernel times of the last launch.
static int read_times(int iters, double *out, int max, int64_t *n_used) {
  int n = iters < max ? iters : max;
  int64_t *h = (int64_t *)malloc(n * sizeof(int64_t));
  cudaError_t e = cudaMemcpy(h, S.times, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess)
    for (int i = 0; i < n; i++) out[(*n_used)++] = (double)(h[i] > 0 ? h[i] : 1) * 1e-9;
  free(h);
  if (e != cudaSuccess) return fail(NB_ERR, "reading the in-kernel times: %s", cudaGetErrorString(e));
  return 0;
}

// The one measurement loop. Collective calls, in this order on every PE:
// agreement 1 (arguments valid, buffers prepared), the family's setup and
// its agreement, the two calibration launches' barriers, agreement 2 (status and
// PE 0's iteration count, one exchange), a graph's agreement, one barrier before each
// synchronised launch, a barrier after the launches, agreement 3 (status and
// verification counts).
extern "C" int nb_run(const nb_args *abi, double *samples_out, int max_samples, nb_result *res) {
  memset(res, 0, sizeof *res);
  res->failed_pe = -1;
  if (int rc = on_device()) return rc;
  Args args;
  args.op = 0;
  memcpy(static_cast<nb_args *>(&args), abi, sizeof *abi);
  args.nb_args::op[NB_OP_NAME - 1] = 0;
  Run run;
  memset(&run, 0, sizeof run);
  Run *r = &run;
  const Args *a = r->a = &args;
  r->e = find_op(a->nb_args::op);
  int st = 0;
  if (r->e) args.op = r->e->op;
  if (!r->e) st = fail(NB_ERR, "unknown operation \"%s\": not in this shim's dispatch table (an older shim? 'nvshbench build-shim --rebuild')", a->nb_args::op);
  else if (a->samples <= 0 || a->warmup < 0 || a->iters < 0 || a->iters > NB_MAX_ITERS)
    st = fail(NB_ERR, "samples must be > 0, warmup >= 0, iters 0..%d", NB_MAX_ITERS);
  else if (a->peer < 0 || a->peer >= S.npes) st = fail(NB_ERR, "peer %d out of range (%d PEs)", a->peer, S.npes);
  const Family *f = r->e ? r->e->family : nullptr;
  if (!st) st = f->validate(r);
  if (!st) st = f->prepare(r);
  if (!st) {
    cudaError_t e = cudaStreamSynchronize(S.stream);
    if (e != cudaSuccess) st = fail(NB_ERR, "preparing: %s", cudaGetErrorString(e));
  }
  if ((st = agree(st, 0, 0, 0, res, nullptr))) return st;
  if (f->setup) {
    st = f->setup(r);
    if ((st = agree(st, 0, 0, 0, res, nullptr))) return st;
  }
  int active = f->active(r);

  // Calibration: PE 0 times one launch; every PE uses PE 0's count. A
  // first launch before it is not timed: the first launch of a kernel
  // loads its module (CUDA's lazy loading, about a millisecond), which
  // would otherwise pass for the operation's cost and leave the point with
  // a few iterations per launch, its per-operation time inflated by the
  // launch overhead (seen at the first size of every benchmark).
  int64_t want = a->iters > 0 ? a->iters : f->default_iters;
  if (a->iters <= 0 && f->cal_iters > 0) {
    float ms = 0;
    for (int pass = 0; pass < 2; pass++) {
      int n = pass ? f->cal_iters : 1;
      if (f->synced(r)) {
        if (f->before_launch && !st) st = f->before_launch(r);
        nvshmem_barrier_all();
      }
      if (active && !st) st = timed_launch(r, n, nullptr, f->synced(r), &ms);
      r->ops += n;
    }
    double per = ms / f->cal_iters;
    double n = 20.0 / (per > 1e-4 ? per : 1e-4);
    want = n < 1 ? 1 : (n > 1000 ? 1000 : (int64_t)n);
    // The in-kernel timer gives one sample per iteration: at least ten.
    if (a->timer == NB_TIMER_GLOBAL && want < 10) want = 10;
  }
  if ((st = agree(st, 0, 0, 0, res, nullptr, &want))) return st;  // and every PE takes PE 0's count
  int iters = (int)want;
  if (iters < 1) iters = 1;

  cudaGraphExec_t gexec = nullptr;
  if (a->graph) {
    if (active) {
      cudaGraph_t graph;
      cudaError_t e = cudaStreamBeginCapture(S.stream, cudaStreamCaptureModeRelaxed);
      if (e != cudaSuccess) st = fail(NB_ERR, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
      else {
        int rc = r->e->launch(r, iters);
        e = cudaStreamEndCapture(S.stream, &graph);
        if (rc) st = rc;
        else if (e != cudaSuccess) st = fail(NB_NOT_CAPTURABLE, "this operation cannot be captured in a CUDA graph: %s", cudaGetErrorString(e));
        else {
          e = cudaGraphInstantiate(&gexec, graph, 0);
          cudaGraphDestroy(graph);
          if (e != cudaSuccess) st = fail(NB_NOT_CAPTURABLE, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
        }
      }
      cudaGetLastError();
    }
    if ((st = agree(st, 0, 0, 0, res, nullptr))) {
      if (gexec) cudaGraphExecDestroy(gexec);
      return st;
    }
  }

  int timed = a->timer == NB_TIMER_GLOBAL ? 1 : a->samples;
  int synced = f->synced(r);
  int64_t n_used = 0;
  for (int s = -a->warmup; s < timed; s++) {
    if (synced) {
      if (!st && f->before_launch) st = f->before_launch(r);
      nvshmem_barrier_all();
    }
    if (active && !st) {
      float ms = 0;
      st = timed_launch(r, iters, gexec, synced, &ms);
      if (!st && s >= 0 && r->initiator) {
        if (a->timer == NB_TIMER_EVENTS) {
          if (n_used < max_samples) samples_out[n_used++] = (double)ms * 1e-3 / iters / f->per_op(r);
        } else {
          st = read_times(iters, samples_out, max_samples, &n_used);
        }
      }
    }
    r->ops += iters;  // every PE counts what the active ones launched
  }
  if (gexec) cudaGraphExecDestroy(gexec);
  {
    cudaError_t e = cudaStreamSynchronize(S.stream);
    if (e != cudaSuccess && !st) st = fail(NB_ERR, "after the timed launches: %s", cudaGetErrorString(e));
  }
  nvshmem_barrier_all();
  res->initiator = r->initiator;
  res->iters = a->timer == NB_TIMER_GLOBAL ? 1 : iters;  // per sample
  res->n_samples = n_used;
  res->bytes = f->bytes(r);
  res->work_set = f->work_set(r);
  if (!st && a->verify) st = f->check(r, res);
  int64_t sums[3] = {0, 0, 0};
  if ((st = agree(st, res->errors, res->checked, res->bytes, res, sums))) return st;
  res->job_errors = sums[0];
  res->job_checked = sums[1];
  res->job_bytes = sums[2];
  return 0;
}
