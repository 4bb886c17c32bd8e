// nvshbench.cu: the C ABI of libnvshbench.so (see nvshbench.h) and the one
// measurement loop (nb_run) that every benchmark runs through. The shim is
// one translation unit (one device link) made of one idea per file, included
// in this order:
//   common.cuh       the state nb_init makes, errors, the dispatch table's types and traits
//   exchange.cuh     exchange and agree: the host-side collective steps
//   check.cuh        the verification patterns, fills and the one check helper
//   nvml.cuh         the physical links and memory of a GPU (the ceilings)
//   chain.cuh        the pointer chains every chase walks (and the L2 flush)
//   device.cuh       the device helpers the families share (chunks, a group's copy, the one-CTA chase)
//   nccl.cuh         NCCL: its loader, communicators and device-API objects
//   rma.cuh          the RMA family (bulk, scalar, load/store, atomics, copy references)
//   latency.cuh      the latency family (round trips) and the in-run floors
//   strided.cuh      NVSHMEM's strided RMA (iput, iget) at element strides
//   rate.cuh         issue rates: 8-byte put_nbi and p messages a second
//   allreduce.cuh    our multi-CTA AllReduce, one template for NVSHMEM and NCCL's LSA
//   nccldev.cuh      NCCL's device API beside NVSHMEM (LSA put/get, GIN, LSA round trips)
//   newer_nccl.cuh   NCCL rows only newer releases have (their version macros, else waived): CE collectives
//   collectives.cuh  the collectives family (NVSHMEM device/on-stream, ours, NCCL)
//   order.cuh        quiet, barrier and sync on a stream (host-issued, beside the device forms)
//   host.cuh         host calls: the symmetric heap's allocations, team splits
//   ncclp2p.cuh      NCCL send/recv: one way and a ping-pong (the host-driven baseline)
//   newer.cuh        rows only newer libraries have (compiled by their version macros, else waived)
//   atomics.cuh      NVSHMEM's atomics (AMO API, and 3.7's float adds), each as a rate (rma) and a round trip (lat)
//   moe.cuh          the MoE dispatch/combine family (NVSHMEM, NCCL's device API, NCCL host)
//   pm_mech.cuh      bytes per SM's transfer mechanisms and compute kernels, each a struct and a word of a list
//   pm_kernels.cuh   bytes per SM's fused kernel: a transfer role beside a compute role
//   pm_ce.cuh        bytes per SM's side work beside the copy engine (a second stream)
//   pm_feed.cuh      bytes per SM's copies a host thread feeds beside a timed compute kernel
//   pm_smcheck.cuh   bytes per SM: whether the copy engine's copies need an SM
//   persm.cuh        bytes per SM, the family: transfer mechanisms over SM budgets, beside a compute kernel
// Every NVSHMEM / CUDA / NCCL / NVML call of the tool lives in this library.
//
// The multi-PE rule: every host call that all PEs must make together
// (symmetric allocation, barriers, exchanges, NCCL communicator creation)
// is made here, by nb_init, nb_job, nb_agree and nb_run, in one order on
// every PE whatever the operation, size or outcome. A PE that fails keeps
// making those calls and reports its failure at the next agreement, where
// every PE learns it; no PE returns early between two collective calls.
#include "common.cuh"
#include "exchange.cuh"
#include "check.cuh"
#include "nvml.cuh"
#include "chain.cuh"
#include "device.cuh"
#include "nccl.cuh"
#include "rma.cuh"
#include "latency.cuh"
#include "strided.cuh"
#include "rate.cuh"
#include "allreduce.cuh"
#include "nccldev.cuh"
#include "newer_nccl.cuh"
#include "collectives.cuh"
#include "order.cuh"
#include "host.cuh"
#include "ncclp2p.cuh"
#include "newer.cuh"
#include "atomics.cuh"
#include "moe.cuh"
#include "pm_mech.cuh"
#include "pm_kernels.cuh"
#include "pm_ce.cuh"
#include "pm_feed.cuh"
#include "pm_smcheck.cuh"
#include "persm.cuh"

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
  gethostname(o->host, sizeof o->host - 1);
  o->my_pe = -1;
  // The libraries as loaded (no nvshmem_init needed: the host library's own
  // version constants; NCCL's ncclGetVersion where it loads): what a header
  // records, whatever folder the toolchain found them in.
  nvshmemx_vendor_get_version_info(&o->nvshmem_major, &o->nvshmem_minor, &o->nvshmem_patch);
  o->nccl_version = nccl_version_loaded();
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
  {
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    S.l2 = l2;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    S.sms = sms;
  }
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
  CK(cudaMalloc(&S.times, (NB_MAX_ITERS + 1) * sizeof(int64_t)));  // a stamp per iteration and the end
  CK(cudaMalloc(&S.cursor, sizeof(int64_t)));
  CK(cudaMalloc(&S.epochs, sizeof(uint64_t) * NB_MAX_CTAS));
  CK(cudaMemset(S.cflags, 0, sizeof(uint64_t) * NB_MAX_PES * NB_MAX_CTAS));
  CK(cudaMemset(S.flag, 0, 2 * sizeof(uint64_t)));
  CK(cudaMemset(S.epochs, 0, sizeof(uint64_t) * NB_MAX_CTAS));
  CK(cudaStreamCreateWithFlags(&S.stream, cudaStreamNonBlocking));
  if (int rc = pm_side_streams()) return rc;  // next to S.stream: a hardware queue of their own (pm_ce.cuh)
  CK(cudaEventCreate(&S.ev0));
  CK(cudaEventCreate(&S.ev1));
  CK(cudaDeviceSynchronize());
  nccl_version_loaded();  // dlopen NCCL now (local), so nb_job reports it
  nvshmem_barrier_all();
  return 0;
}

extern "C" int nb_finalize(void) {
  if (!S.inited) return 0;
  cudaSetDevice(S.device);
  pm_finalize();  // first: a background compute left armed would hold the device synchronisation 10 s
  cudaDeviceSynchronize();
  nvshmem_barrier_all();
  nd_release();
  moe_free();
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
static int info_fill(nb_info *o) {
  int rc = nb_device_info(S.device, o);
  if (rc) return rc;
  o->my_pe = S.me;
  o->n_pes = S.npes;
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
  for (int q = 0; q < S.npes; q++) {
    row[q] = path_to(q);
    if (q != S.me && row[q] == NB_PATH_LOCAL) S.shared_gpu = 1;
  }
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

extern "C" int nb_gather(const uint8_t *mine, int64_t len, uint8_t *out, int64_t max, int64_t *lens) {
  if (int rc = on_device()) return rc;
  int rc = gather(mine, len, out, max, lens);
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
// ---------------------------------------------------------------------------
// The dispatch table: every family's entries, looked up by name.
struct OpTable {
  const OpEntry *entries;
  size_t n;
};
#define NB_TABLE(t) {t, sizeof t / sizeof t[0]}
static const OpTable kTables[] = {NB_TABLE(kRMAOps), NB_TABLE(kLatOps), NB_TABLE(kAmoRateOps), NB_TABLE(kAmoTripOps), NB_TABLE(kStridedOps), NB_TABLE(kRateOps), NB_TABLE(kOrderOps), NB_TABLE(kHostOps), NB_TABLE(kHeapGrowOps), NB_TABLE(kP2POps), NB_TABLE(kNewerOps), NB_TABLE(kNDOps), NB_TABLE(kNDLatOps), NB_TABLE(kCollOps),
                                  NB_TABLE(kMoEOps), NB_TABLE(kPMOps)};
#undef NB_TABLE

static const OpEntry *find_op(const char *name) {
  for (const OpTable &t : kTables)
    for (size_t i = 0; i < t.n; i++)
      if (strncmp(t.entries[i].name, name, NB_OP_NAME) == 0) return &t.entries[i];
  return nullptr;
}

// launch makes one launch of iters iterations (or replays its graph) and
// counts it (this PE's launches; the iterations every PE counts in nb_run).
static int launch(Run *r, int iters, cudaGraphExec_t gexec) {
  int rc = 0;
  if (gexec) {
    cudaError_t e = cudaGraphLaunch(gexec, S.stream);
    if (e != cudaSuccess) rc = fail(NB_ERR, "cudaGraphLaunch: %s", cudaGetErrorString(e));
  } else {
    rc = r->e->launch(r, iters);
  }
  r->launches++;
  return rc;
}

// disarm ends the side work a family armed for a timed launch
// (SideWork.disarm), rc being the launch's status so far: a failed launch
// keeps its own error.
static int disarm(Run *r, int rc) {
  const SideWork *w = r->e->family->side;
  if (!rc) return w->disarm(r, 1);
  static char keep[sizeof g_err];
  memcpy(keep, g_err, sizeof keep);
  (void)w->disarm(r, 0);
  memcpy(g_err, keep, sizeof keep);
  return rc;
}

// timed_launch times one launch of iters operations with device events: the
// one timer of every figure. gate: the PEs start it together on the device
// (an on-stream barrier before the first event), so a PE whose host thread
// is late to enqueue (a busy core under mpirun's binding) delays only the
// untimed barrier, not the other PE's timed work.
static int timed_launch(Run *r, int iters, cudaGraphExec_t gexec, int gate, float *ms) {
  // The kernels raise the stamps they write: one an iteration and the end
  // (the families that stamp every iteration loop at most 1000) or two a
  // launch (a fused loop of up to NB_MAX_ITERS).
  int64_t stamps = (iters < NB_MAX_ITERS ? iters : NB_MAX_ITERS) + 1;
  CK(cudaMemsetAsync(S.times, 0, stamps * sizeof(int64_t), S.stream));
  if (gate) {
    nvshmemx_barrier_all_on_stream(S.stream);
    CKLAUNCH("start gate (on-stream barrier)");
  }
  // A family's side work starts before the first event (SideWork.arm: the
  // window must not open before it runs) and ends after the last, whatever
  // happened between (SideWork.disarm).
  int armed = 0;
  if (!gexec && r->e->family->side) {
    if (int rc = r->e->family->side->arm(r)) return rc;
    armed = 1;
  }
  cudaError_t e = cudaEventRecord(S.ev0, S.stream);
  int rc = e == cudaSuccess ? 0 : fail(NB_ERR, "cudaEventRecord before the launch: %s", cudaGetErrorString(e));
  if (!rc) rc = launch(r, iters, gexec);
  if (!rc && (e = cudaEventRecord(S.ev1, S.stream)) != cudaSuccess) rc = fail(NB_ERR, "cudaEventRecord after the launch: %s", cudaGetErrorString(e));
  if (armed) rc = disarm(r, rc);
  if (rc) return rc;
  CK(cudaEventSynchronize(S.ev1));
  CK(cudaEventElapsedTime(ms, S.ev0, S.ev1));
  return 0;
}

// step makes one launch of a point on this PE, or, where this PE does not
// launch (idle: a third PE of a two-PE point; or failed), meets the
// launch's start gate all the same when the launches are synchronised: the
// gate is an on-stream barrier of every PE.
static int step(Run *r, int iters, cudaGraphExec_t gexec, int active, int synced, int st, float *ms) {
  if (active && !st) return timed_launch(r, iters, gexec, synced, ms);
  if (synced) {
    nvshmemx_barrier_all_on_stream(S.stream);
    cudaError_t e = cudaStreamSynchronize(S.stream);
    if (!st && e != cudaSuccess) st = fail(NB_ERR, "start gate (on-stream barrier): %s", cudaGetErrorString(e));
  }
  return st;
}

// read_times appends the in-kernel times of the last launch (seconds per
// operation, as the samples) to out, up to max: the periods between its
// stamps, each over the operations of the `every` iterations it spans
// (stamp_every: 1 or the whole launch, so the periods tile the loop).
static int read_times(int iters, int every, int per_iter, double *out, int max, int64_t *n_used) {
  int n = iters / every;
  if (n > max - *n_used) n = (int)(max - *n_used);
  if (n <= 0) return 0;
  int64_t *h = (int64_t *)malloc((n + 1) * sizeof(int64_t));
  if (!h) return fail(NB_ERR, "no host memory for %d in-kernel times", n);
  cudaError_t e = cudaMemcpy(h, S.times, (n + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess)
    for (int g = 0; g < n; g++) {
      int64_t d = h[g + 1] - h[g];
      out[(*n_used)++] = (double)(d > 0 ? d : 1) * 1e-9 / ((double)every * per_iter);
    }
  free(h);
  if (e != cudaSuccess) return fail(NB_ERR, "reading the in-kernel times: %s", cudaGetErrorString(e));
  return 0;
}

// stamp_every: the iterations a stamp period spans: one for the latency
// families (one CTA stamps every iteration) and for one operation a launch;
// a fused loop of many CTAs stamps its launch (common.cuh: stamp_begin).
static int stamp_every(Run *r, const Family *f, int iters) {
  if (f->kernel_timer || (f->per_op_launches && f->per_op_launches(r))) return 1;
  return iters;
}

// run_open: this PE's part of a point before the first agreement (no
// collective call): its arguments (the ABI's and the entry's code), its
// entry in the dispatch table, the family's checks and preparation.
static int run_open(const nb_args *abi, Args *args, Run *r) {
  args->op = 0;
  memcpy(static_cast<nb_args *>(args), abi, sizeof *abi);
  args->nb_args::op[NB_OP_NAME - 1] = 0;
  memset(r, 0, sizeof *r);
  const Args *a = r->a = args;
  r->e = find_op(a->nb_args::op);
  if (!r->e)
    return fail(NB_ERR, "unknown operation \"%s\": not in this shim's dispatch table (an older shim? 'nvshbench build-shim --rebuild')", a->nb_args::op);
  args->op = r->e->op;
  if (a->samples <= 0 || a->warmup < 0 || a->iters < 0 || a->iters > NB_MAX_ITERS)
    return fail(NB_ERR, "samples must be > 0, warmup >= 0, iters 0..%d", NB_MAX_ITERS);
  if (a->peer < 0 || a->peer >= S.npes) return fail(NB_ERR, "peer %d out of range (%d PEs)", a->peer, S.npes);
  if (a->initiator < 0 || a->initiator >= S.npes) return fail(NB_ERR, "initiator %d out of range (%d PEs)", a->initiator, S.npes);
  const Family *f = r->e->family;
  int st = f->validate(r);
  if (!st) st = f->prepare(r);
  if (!st) {
    cudaError_t e = cudaStreamSynchronize(S.stream);
    if (e != cudaSuccess) st = fail(NB_ERR, "preparing: %s", cudaGetErrorString(e));
  }
  return st;
}

// calibrate: the iterations of every timed launch, agreed (*want): the
// given ones, the family's default, or the initiator's calibration, on
// every PE. Collective calls: the two calibration launches' barriers, the
// agreement on a third (the initiator's wish: its calibration launch was
// under 1 ms) and its barrier, and the agreement on the count. Returns
// that agreement's status.
//
// The initiator times one launch; every PE uses its count (args.initiator:
// 0 for the families where every PE times). A first launch before it is
// not timed: the first launch of a kernel loads its module (CUDA's
// lazy loading, about a millisecond), which would otherwise pass for the
// operation's cost and leave the point with a few iterations per launch,
// its per-operation time inflated by the launch overhead (seen at the
// first size of every benchmark).
static int calibrate(Run *r, int active, int synced, nb_result *res, int64_t *want) {
  const Args *a = r->a;
  const Family *f = r->e->family;
  int st = 0;
  *want = a->iters > 0 ? a->iters : f->default_iters;
  if (a->iters <= 0 && f->cal_iters > 0) {
    float ms = 0;
    for (int pass = 0; pass < 2; pass++) {
      int n = pass ? f->cal_iters : 1;
      if (synced) {
        if (f->before_launch && !st) st = f->before_launch(r);
        nvshmem_barrier_all();
      }
      st = step(r, n, nullptr, active, synced, st, &ms);
      r->ops += n;
      r->last = n;
    }
    double per = ms / f->cal_iters;
    double n = 20.0 / (per > 1e-4 ? per : 1e-4);
    // Where another PE shares this GPU, a floor makes as many dependent
    // loads a launch as a round trip row makes round trips: a longer launch
    // shares the GPU with the other PE's spinning barrier, which slows the
    // chase. Alone on its GPU a floor runs full-length launches: short ones
    // read the cache-served chase slower than a plain chase.
    // A kernel that stamps every iteration (the latency families) keeps at
    // most 1000 of them, and a launch of host calls (T_HOST) makes at most
    // 1000; a kernel that stamps its launch loops as long as ~20 ms takes,
    // up to NB_MAX_ITERS: capped at 1000 too, the atomics' rate (a short
    // iteration) made launches so short that the events carried the
    // launch's own cost, below the in-kernel timer: "timers disagree".
    int loop_cap = f->kernel_timer || has(r, T_HOST) ? 1000 : NB_MAX_ITERS;  // host-issued: a call an iteration
    int cap = f->per_op_launches && f->per_op_launches(r) ? NB_PER_OP_ITERS : (has(r, T_FLOOR) && S.shared_gpu ? 1000 / NB_FLOOR_HOPS : loop_cap);
    // A calibration launch of under 1 ms was mostly its launch (an atomic
    // rate's iteration is short: from one iteration it made launches whose
    // events sat above the in-kernel timer): the initiator
    // asks every PE for one more, of the count it just estimated, and
    // estimates again from that (agreed, so every PE makes the same launches).
    int64_t probe = ms < 1.0f && n > f->cal_iters && cap > f->cal_iters ? (int64_t)(n < cap ? n : cap) : 0;
    if ((st = agree(st, 0, 0, 0, res, nullptr, &probe, a->initiator))) return st;
    if (probe > 0) {
      if (synced) {
        if (f->before_launch) st = f->before_launch(r);
        nvshmem_barrier_all();
      }
      st = step(r, (int)probe, nullptr, active, synced, st, &ms);
      r->ops += probe;
      r->last = (int)probe;
      per = ms / probe;
      n = 20.0 / (per > 1e-7 ? per : 1e-7);
    }
    *want = n < 1 ? 1 : (n > cap ? cap : (int64_t)n);
    // The latency families' in-kernel distribution needs iterations: at
    // least ten (a bandwidth launch keeps its calibrated count: its samples'
    // launches give the periods).
    if (f->kernel_timer && *want < 10) *want = 10;
  }
  return agree(st, 0, 0, 0, res, nullptr, want, a->initiator);  // and every PE takes the initiator's count
}

// capture: a graph of one timed launch (one kernel, or one per operation)
// that the samples replay, on the PEs that launch; the agreement on it
// (collective). Returns its status (*gexec null where it failed).
static int capture(Run *r, int iters, int active, nb_result *res, cudaGraphExec_t *gexec) {
  int st = 0;
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
        e = cudaGraphInstantiate(gexec, graph, 0);
        cudaGraphDestroy(graph);
        if (e != cudaSuccess) st = fail(NB_NOT_CAPTURABLE, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
      }
    }
    cudaGetLastError();
  }
  if ((st = agree(st, 0, 0, 0, res, nullptr))) {
    if (*gexec) cudaGraphExecDestroy(*gexec);
    *gexec = nullptr;
  }
  return st;
}

// Where the samples go: seconds per operation (events), the in-kernel
// per-iteration times, and how many of each were written.
struct Samples {
  double *out, *kernel;
  int max_out, max_kernel;
  int64_t n, n_kernel;
};

// sample: the warm-up and timed launches (collective: a barrier before
// each synchronised launch), each timed sample of an initiator kept. Returns
// this PE's status (st: its status so far; a failed PE meets every launch's
// barrier all the same).
static int sample(Run *r, int iters, cudaGraphExec_t gexec, int active, int synced, int per_iter, int st, Samples *sm) {
  const Family *f = r->e->family;
  for (int s = -r->a->warmup; s < r->a->samples; s++) {
    if (synced) {
      if (!st && f->before_launch) st = f->before_launch(r);
      nvshmem_barrier_all();
    }
    float ms = 0;
    int was = st;
    st = step(r, iters, gexec, active, synced, st, &ms);
    if (active && !was && !st && s >= 0 && r->initiator) {
      if (sm->n < sm->max_out) sm->out[sm->n++] = (double)ms * 1e-3 / iters / per_iter;
      if ((f->kernel_timer || r->stamped) && sm->kernel) st = read_times(iters, stamp_every(r, f, iters), per_iter, sm->kernel, sm->max_kernel, &sm->n_kernel);
    }
    r->ops += iters;  // every PE counts what the active ones launched
    r->last = iters;
  }
  return st;
}

// finish: after the launches, on every PE: the stream drained, what the
// family left beside it ended (SideWork.end), the point's result, the check
// (collective where the family's is; also after an error) and the last
// agreement (status and verification counts).
static int finish(Run *r, int st, int iters, int per_iter, const Samples &sm, nb_result *res) {
  const Family *f = r->e->family;
  {
    cudaError_t e = cudaStreamSynchronize(S.stream);
    if (e != cudaSuccess && !st) st = fail(NB_ERR, "after the timed launches: %s", cudaGetErrorString(e));
  }
  if (f->side) {  // what the launches may have left beside S.stream (SideWork.end)
    // A point that failed keeps its first error: end's own (a side stream
    // that failed with the launch) would overwrite g_err, as disarm's would.
    static char keep[sizeof g_err];
    if (st) memcpy(keep, g_err, sizeof keep);
    int rc = f->side->end(r, res);
    if (!st) st = rc;
    else memcpy(g_err, keep, sizeof keep);
  }
  nvshmem_barrier_all();
  res->initiator = r->initiator;
  res->iters = iters;
  res->ops_per_iter = per_iter;
  res->n_samples = sm.n;
  res->n_kernel = sm.n_kernel;
  res->bytes = f->bytes(r);
  res->work_set = f->work_set(r);
  if (r->a->verify) {
    // verify runs whatever corrupt returned: a check may make collective
    // calls (barriers, an allocation), which every PE must make.
    int rc = r->a->corrupt && r->e->check->corrupt ? r->e->check->corrupt(r) : 0;
    int vrc = r->e->check->verify(r, res);
    if (!st) st = rc ? rc : vrc;
  }
  int64_t sums[3] = {0, 0, 0};
  if ((st = agree(st, res->errors, res->checked, res->bytes, res, sums))) return st;
  res->job_errors = sums[0];
  res->job_checked = sums[1];
  res->job_bytes = sums[2];
  return 0;
}

// The one measurement loop. Collective calls, in this order on every PE:
// agreement 1 (arguments valid, buffers prepared), the family's setup and
// its agreement, the calibration's (calibrate), a graph's agreement, one
// barrier before each synchronised launch (sample), a barrier after the
// launches, the check (collective where the family's is), agreement 3
// (status and verification counts: finish). A PE that fails keeps making
// them.
extern "C" int nb_run(const nb_args *abi, double *samples_out, int max_samples, double *kernel_out, int max_kernel, nb_result *res) {
  memset(res, 0, sizeof *res);
  res->failed_pe = -1;
  if (int rc = on_device()) return rc;
  Args args;
  Run run;
  Run *r = &run;
  int st = run_open(abi, &args, r);
  if ((st = agree(st, 0, 0, 0, res, nullptr))) return st;
  const Family *f = r->e->family;
  if (f->setup) {
    st = f->setup(r);
    if ((st = agree(st, 0, 0, 0, res, nullptr))) return st;
  }
  int active = f->active(r);
  int synced = f->synced(r);
  int per_iter = ops_per_iter(r);
  int64_t want = 0;
  if ((st = calibrate(r, active, synced, res, &want))) return st;
  int iters = want < 1 ? 1 : (int)want;
  cudaGraphExec_t gexec = nullptr;
  if (args.graph && (st = capture(r, iters, active, res, &gexec))) return st;
  Samples sm = {samples_out, kernel_out, max_samples, max_kernel, 0, 0};
  st = sample(r, iters, gexec, active, synced, per_iter, st, &sm);
  if (gexec) cudaGraphExecDestroy(gexec);
  return finish(r, st, iters, per_iter, sm, res);
}
