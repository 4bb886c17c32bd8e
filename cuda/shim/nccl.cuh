// nccl.cuh: NCCL as the shim uses it, in one place: the library opened
// with dlopen at first use (the shim loads without it; the NCCL used is the
// one on the library path, its version reported), its communicators (one
// per forced algorithm/protocol, made collectively at the first point that
// needs it), and the objects of NCCL's device API (2.28: symmetric windows,
// a device communicator with LSA barriers, GIN resources). Every collective
// NCCL step is agreed by every PE before the next; a failure is remembered
// on every PE and given as the reason of every later point of the kind.
//
// With NCCL's headers on the include path (the pip wheel's, found by
// build-shim) the shim also carries the NCCL device API benchmarks
// (nccldev.cuh); without them the few types of NCCL's stable C ABI are
// declared here and the device API reports itself unavailable.

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
static const ncclDataType_t ncclUint8 = 1, ncclFloat16 = 6, ncclFloat32 = 7, ncclBfloat16 = 9;
static const ncclRedOp_t ncclSum = 0;
#endif

// --- NCCL through dlopen
struct NcclApi {
  void *h = nullptr;
  int version = 0;
  char why[256] = "";  // why it is not loaded
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  ncclResult_t (*getVersion)(int *);
  const char *(*errorString)(ncclResult_t);
};
static NcclApi g_nccl;
static int g_nccl_tried = 0;

// The functions a collective calls (ncclAllReduce, ...) are declared in
// its file, each an NcclFn of its name and signature; declaring one
// registers it here, and the loader resolves every registered one with the
// functions above (a library that lacks one is not loaded: g_nccl.why
// names it). A collective that calls NCCL names what it calls, in one place.
struct NcclSym {
  const char *name;
  void **fn;
};
enum { NB_NCCL_SYMS = 32 };
static NcclSym g_nccl_syms[NB_NCCL_SYMS];
static int g_nccl_nsyms = 0;  // more than NB_NCCL_SYMS: the loader refuses the library

template <typename Sig>
struct NcclFn {
  Sig *call = nullptr;  // resolved when the library loads
  explicit NcclFn(const char *name) {
    if (g_nccl_nsyms < NB_NCCL_SYMS) g_nccl_syms[g_nccl_nsyms] = NcclSym{name, (void **)&call};
    g_nccl_nsyms++;
  }
};

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
  SYM(getUniqueId, "ncclGetUniqueId") SYM(commInitRank, "ncclCommInitRank") SYM(send, "ncclSend") SYM(recv, "ncclRecv")
  SYM(groupStart, "ncclGroupStart") SYM(groupEnd, "ncclGroupEnd") SYM(getVersion, "ncclGetVersion") SYM(errorString, "ncclGetErrorString")
#undef SYM
  if (g_nccl_nsyms > NB_NCCL_SYMS) {
    snprintf(g_nccl.why, sizeof g_nccl.why, "the shim declares %d NCCL functions, more than its %d slots (nccl.cuh)", g_nccl_nsyms, NB_NCCL_SYMS);
    return 0;
  }
  for (int i = 0; i < g_nccl_nsyms; i++)
    if (!(*g_nccl_syms[i].fn = dlsym(h, g_nccl_syms[i].name))) {
      snprintf(g_nccl.why, sizeof g_nccl.why, "libnccl.so.2 lacks %s", g_nccl_syms[i].name);
      return 0;
    }
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

static ncclDataType_t nccl_type(int dtype) {
  return dtype == NB_DT_BF16 ? ncclBfloat16 : (dtype == NB_DT_F16 ? ncclFloat16 : ncclFloat32);
}

// ---------------------------------------------------------------------------
// The device API's objects.

// The one refusal of a shim built without NCCL's device headers, given at
// validation (nd_headers) of every operation that needs them.
static int nd_missing(void) {
  return fail(NB_UNREACHABLE, "this shim was built without NCCL's device headers (nccl_device.h): rebuild it where the NCCL 2.28 wheel is installed ('nvshbench build-shim')");
}

static int nd_headers(void) { return NB_NCCL_DEVICE ? 0 : nd_missing(); }

#if NB_NCCL_DEVICE
// The device ABI of 2.28 differs from 2.29+: the loaded library must match
// the headers the kernels were compiled against.
#define NB_NCCL_DEV_ABI (NCCL_VERSION_CODE / 100)

struct NcclDevApi {
  ncclResult_t (*memAlloc)(void **, size_t);
  ncclResult_t (*memFree)(void *);
  ncclResult_t (*winRegister)(ncclComm_t, void *, size_t, ncclWindow_t *, int);
  ncclResult_t (*winDeregister)(ncclComm_t, ncclWindow_t);
  ncclResult_t (*devCommCreate)(ncclComm_t, ncclDevCommRequirements_t const *, ncclDevComm_t *);
  ncclResult_t (*devCommDestroy)(ncclComm_t, ncclDevComm_t const *);
  const char *(*lastError)(ncclComm_t);
};

struct NcclDev {
  int state;      // 0: not made yet, 1: ready, <0: failed (status code)
  char why[400];  // the failure, the same on every PE
  NcclDevApi f;
  ncclComm_t comm;
  void *src, *dst;          // ncclMemAlloc'd, S.buf bytes each
  ncclWindow_t wsrc, wdst;  // registered NCCL_WIN_COLL_SYMMETRIC
  int reg_src, reg_dst, dc_made;
  ncclDevComm dc;           // LSA barriers: one per CTA up to NB_MAX_CTAS
  int gin_state;            // as state, for the device communicator with GIN resources
  char gin_why[400];
  ncclDevComm gdc;
};
static NcclDev g_nd;

static int nd_syms(void) {
  void *h = g_nccl.h;
#define SYM(m, n)                                                                            \
  if (!(*(void **)&g_nd.f.m = dlsym(h, n)))                                                  \
    return fail(NB_UNREACHABLE, "libnccl.so.2 (%d) has no %s: the NCCL device API needs NCCL 2.28", g_nccl.version, n);
  SYM(memAlloc, "ncclMemAlloc") SYM(memFree, "ncclMemFree") SYM(winRegister, "ncclCommWindowRegister")
  SYM(winDeregister, "ncclCommWindowDeregister") SYM(devCommCreate, "ncclDevCommCreate")
  SYM(devCommDestroy, "ncclDevCommDestroy") SYM(lastError, "ncclGetLastError")
#undef SYM
  return 0;
}

// nd_err formats a failed NCCL call with NCCL's own last message.
static int nd_err(int code, const char *what, ncclResult_t nr) {
  const char *last = g_nd.f.lastError && g_nd.comm ? g_nd.f.lastError(g_nd.comm) : "";
  return fail(code, "%s: %s%s%s", what, g_nccl.errorString(nr), last && last[0] ? ": " : "", last ? last : "");
}

// nd_step ends one collective step: every PE learns every PE's status; a
// failure becomes the remembered reason.
static int nd_step(int st) {
  st = agree(st, 0, 0, 0, nullptr, nullptr);
  if (st) {
    g_nd.state = st;
    snprintf(g_nd.why, sizeof g_nd.why, "%s", g_err);
  }
  return st;
}

// nd_make is collective: the communicator, two windows and the device
// communicator, each step agreed before the next collective NCCL call.
static int nd_make(void) {
  int st = 0;
  if (!g_nccl.h) st = fail(NB_UNREACHABLE, "%s", g_nccl.why);
  else if (g_nccl.version / 100 != NB_NCCL_DEV_ABI)
    st = fail(NB_UNREACHABLE, "the NCCL device API kernels were compiled against NCCL %d.%d headers and libnccl.so.2 is %d: the device ABI changes between minor versions (2.28 vs 2.29+)",
              NCCL_MAJOR, NCCL_MINOR, g_nccl.version);
  else st = nd_syms();
  if ((st = nd_step(st))) return st;
  if ((st = comm_make("devapi", "", ""))) return nd_step(st);
  g_nd.comm = comm_find("devapi")->comm;
  size_t bytes = ((size_t)S.buf + NCCL_WIN_REQUIRED_ALIGNMENT - 1) & ~(size_t)(NCCL_WIN_REQUIRED_ALIGNMENT - 1);
  ncclResult_t nr = g_nd.f.memAlloc(&g_nd.src, bytes);
  if (nr == ncclSuccess) nr = g_nd.f.memAlloc(&g_nd.dst, bytes);
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclMemAlloc", nr);
  if ((st = nd_step(st))) return st;
  nr = g_nd.f.winRegister(g_nd.comm, g_nd.src, bytes, &g_nd.wsrc, NCCL_WIN_COLL_SYMMETRIC);
  g_nd.reg_src = nr == ncclSuccess;
  if (nr == ncclSuccess) {
    nr = g_nd.f.winRegister(g_nd.comm, g_nd.dst, bytes, &g_nd.wdst, NCCL_WIN_COLL_SYMMETRIC);
    g_nd.reg_dst = nr == ncclSuccess;
  }
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclCommWindowRegister", nr);
  if ((st = nd_step(st))) return st;
  ncclDevCommRequirements_t req;
  memset(&req, 0, sizeof req);  // 2.28 has no initializer macro
  req.lsaBarrierCount = NB_MAX_CTAS;
  nr = g_nd.f.devCommCreate(g_nd.comm, &req, &g_nd.dc);
  g_nd.dc_made = nr == ncclSuccess;
  if (nr != ncclSuccess) st = nd_err(NB_ERR, "ncclDevCommCreate (LSA barriers)", nr);
  if ((st = nd_step(st))) return st;
  g_nd.state = 1;
  return 0;
}

// nd_make_gin is collective: a second device communicator that asks for GIN
// resources (one context, one signal per CTA). Without a GIN-capable
// network NCCL refuses it: that refusal, measured here, is the waiver.
static int nd_make_gin(void) {
  ncclDevCommRequirements_t req;
  memset(&req, 0, sizeof req);
  req.ginForceEnable = true;
  req.ginContextCount = 1;
  req.ginSignalCount = NB_MAX_CTAS + 1;  // one per CTA, and the target's acknowledgement
  ncclResult_t nr = g_nd.f.devCommCreate(g_nd.comm, &req, &g_nd.gdc);
  int st = 0;
  if (nr != ncclSuccess) st = nd_err(NB_UNREACHABLE, "ncclDevCommCreate with GIN resources (GPU-initiated networking needs a GIN-capable network: InfiniBand or RoCE)", nr);
  else if (g_nd.gdc.ginContextCount < 1) {
    g_nd.f.devCommDestroy(g_nd.comm, &g_nd.gdc);
    st = fail(NB_UNREACHABLE, "ncclDevCommCreate with GIN resources returned no GIN context");
  }
  st = agree(st, 0, 0, 0, nullptr, nullptr);
  g_nd.gin_state = st ? st : 1;
  if (st) snprintf(g_nd.gin_why, sizeof g_nd.gin_why, "%s", g_err);
  return st;
}

// nd_ready is collective: the objects a point needs (with gin, the GIN
// resources too), made at the first such point; the remembered failure
// afterwards.
static int nd_ready(int gin) {
  if (g_nd.state == 0) nd_make();
  if (g_nd.state < 0) return fail(g_nd.state, "%s", g_nd.why);
  if (gin) {
    if (g_nd.gin_state == 0) nd_make_gin();
    if (g_nd.gin_state < 0) return fail(g_nd.gin_state, "%s", g_nd.gin_why);
  }
  return 0;
}

// nd_ready_all is collective: nd_ready(0), and every rank in the LSA team;
// need says what needs it (the refusal's end).
static int nd_ready_all(const char *need) {
  if (int st = nd_ready(0)) return st;
  if (g_nd.dc.lsaSize != S.npes) return fail(NB_UNREACHABLE, "the LSA team has %d of the %d ranks: %s", g_nd.dc.lsaSize, S.npes, need);
  return 0;
}

static void nd_release(void) {
  if (g_nd.gin_state == 1) g_nd.f.devCommDestroy(g_nd.comm, &g_nd.gdc);
  if (g_nd.dc_made) g_nd.f.devCommDestroy(g_nd.comm, &g_nd.dc);
  if (g_nd.reg_dst) g_nd.f.winDeregister(g_nd.comm, g_nd.wdst);
  if (g_nd.reg_src) g_nd.f.winDeregister(g_nd.comm, g_nd.wsrc);
  if (g_nd.dst) g_nd.f.memFree(g_nd.dst);
  if (g_nd.src) g_nd.f.memFree(g_nd.src);
  memset(&g_nd, 0, sizeof g_nd);
}

// The LSA index of world rank q, or -1 if q is not load/store accessible:
// the LSA team is the lsaSize ranks around this one (lsaRank its place),
// stride 1, as NCCL's ncclTeamLsa / ncclTeamRankToLsa say. Computed here from
// the communicator's fields: those builders are host-callable up to NCCL
// 2.28 and device-only from 2.29 (nccl_device/impl/core__funcs.h of 2.28.9
// and 2.32.3), and this runs on the host.
static int nd_lsa_peer(const ncclDevComm &dc, int q) {
  int lsa = dc.lsaRank + (q - dc.rank);
  return 0 <= lsa && lsa < dc.lsaSize ? lsa : -1;
}

// nd_state: the remembered failure of the NCCL objects, the same on every PE.
static int nd_state(void) {
  if (g_nd.state < 0) return fail(g_nd.state, "%s", g_nd.why);
  return 0;
}
#else
// Without NCCL's device headers every point of the device API is refused at
// validation (nd_headers), on every PE.
static int nd_state(void) { return nd_missing(); }
static void nd_release(void) {}
#endif  // NB_NCCL_DEVICE
