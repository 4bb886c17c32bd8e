// common.cuh: what every file of the shim shares: the state nb_init makes,
// errors, the types of the dispatch table (Args, Run, Family, OpEntry and an
// entry's traits) and the helpers that pick a kernel instantiation.
// Included first by nvshbench.cu: one translation unit, one device link.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
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
#define NB_CHAIN_BYTES (256LL << 20)  // pointer chases walk at least this much memory (and at least 4 x L2)

// Everything nb_init makes, once, in the same order on every PE.
struct State {
  int inited;
  int me, npes, device;
  int64_t buf;                // bytes of each of src, dst, scratch
  int64_t l2;                 // this GPU's L2 in bytes
  int sms;                    // this GPU's SMs (co-residency of a grid)
  int shared_gpu;             // another PE of the job runs on this GPU (nb_job)
  uint8_t *src, *dst, *scratch;  // symmetric
  uint64_t *flag;             // symmetric: 2 signal words (ping-pong)
  uint64_t *cflags;           // symmetric: NB_MAX_PES x NB_MAX_CTAS barrier words (our AllReduce)
  uint8_t *xchg;              // symmetric: 2 halves x NB_MAX_PES x NB_SLOT (exchanges)
  int xhalf;
  uint8_t *stage;             // device: NB_SLOT bytes staged for an exchange
  unsigned long long *count;  // device: [0] mismatches, [1] first mismatch
  int64_t *times;             // device: %globaltimer stamps of the last launch (NB_MAX_ITERS + 1)
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

// with_scope calls f with args.scope as a compile-time constant
// (std::integral_constant), with_flag with a 0/1 flag as one, with_dtype
// with a value of the element type of args.dtype: the one way a launch
// picks its kernel instantiation.
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

template <typename F>
static void with_dtype(int dtype, F f) {
  if (dtype == NB_DT_BF16) f(__nv_bfloat16{});
  else if (dtype == NB_DT_F16) f(__half{});
  else f(float{});
}

static int esize(int dtype) { return dtype == NB_DT_F32 ? 4 : 2; }

// A template's `static_assert(unhandled<OP>, ...)` in the last branch of a
// dispatch on an operation code: an entry whose code reaches no kernel
// branch does not compile (no catch-all branch runs another operation).
template <int OP> constexpr bool unhandled = false;
template <typename T> constexpr bool unhandled_type = false;  // the same for a dispatch on a type

// ---------------------------------------------------------------------------
// The dispatch table. A family holds what its operations share (who runs,
// how they are prepared); an entry is one operation: its name, its traits,
// its check (what its result must be, as code: an entry cannot be written
// without one) and its launch. The Go side reads the entries (name, traits,
// check) from these sources: the traits are stated here once and nowhere
// else.

// An entry's traits (or-ed).
enum {
  T_PAYLOAD = 1,    // moves args.size bytes of payload per operation (counted, verified)
  T_LOADSTORE = 2,  // runs only over a load/store mapping to the peer (no remote transport)
  T_COUNTERS = 4,   // one counter per thread: an iteration is CTAs x threads operations (a rate)
  T_ROUNDTRIP = 8,  // a round trip: iteration i+1 starts when i's result is back (a latency)
  T_FLOOR = 16,     // the in-run floor of round trips: a dependent-load chase (limit/chase-*)
  T_NETWORK = 32,   // needs a network (NCCL's GIN): an InfiniBand/RoCE NIC
  T_PINGPONG = 64,  // both PEs run the kernel, each answering the other (a ping-pong)
  T_CHASE = 128,    // walks a pointer chain: each operation's address comes from the last one's result
  T_BLOCKS = 256,   // a collective whose output is one block per PE (all-to-all, allgather)
  T_NO_OUTPUT = 512,  // leaves nothing to check (the empty kernel): its check says so, nothing can corrupt it
  T_MESSAGES = 1024,  // an issue rate: an iteration is one message per scope group (never waited for singly)
  T_HOST = 2048,      // issued from the host (the copy engine, calls on a stream, host calls): no kernel of ours, no stamps
};

struct OpEntry;

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
  int64_t ops;     // loop iterations each active PE launched so far (agreed counts)
  int64_t launches;  // launches of this point so far (before the one being made)
  int last;        // iterations of the last launch
  void *comm;      // collectives: the NCCL communicator
  // stamped: the last launch's kernels stamped it (stamp_begin / stamp_end
  // below; nb_run's stamp_every says how many stamps) and its grid was
  // co-resident, so CTA 0's start is the launch's. resident: the CTAs of
  // the last launch's grid that fit on the GPU at once (0: not known), what
  // the working set of a grid that runs in waves depends on.
  int stamped;
  int64_t resident;
  int resident_known;  // resident was asked for this point's kernel
};

// SideWork is what a family runs beside its timed launches that no launch
// can start or end itself; one family has any (bytes per SM: the copy
// engine beside a compute kernel, persm.cuh's kPmSide).
//   arm (on a PE that launches, right before a timed launch's first
//     event; not for a graph's replay): starts what must already run when
//     the events start (started inside the launch, it would begin after
//     the first event, and the window would time the launch partly
//     without it).
//   disarm (on every path after an arm that returned 0: right after the
//     timed launch's end event is recorded, ok 1, or where the first event,
//     the launch or the end event failed, ok 0: the launch's error is the
//     one reported): ends what arm started (nothing armed may outlive the
//     launch); its own failure after a clean launch fails the launch.
//   end (on every PE, once a point's launches are done, its stream
//     drained, and before its check): ends what the launches may have
//     left, and may give the point values (put_value; the detail is the
//     check's, or the error's).
struct SideWork {
  int (*arm)(Run *r);
  int (*disarm)(Run *r, int ok);
  int (*end)(Run *r, nb_result *res);
};

// A family, written with named initialisers ({.name = ..., .validate =
// ...}); a member left out is 0 or null, and NB_FAMILY asserts that the
// ones every family needs are there.
struct Family {
  const char *name;
  // validate checks the arguments on this PE (no collective calls).
  int (*validate)(Run *r);
  // active: this PE launches (and, if initiator, times).
  int (*active)(Run *r);
  int (*synced)(Run *r);  // all PEs start every launch together (a barrier before each)
  int cal_iters;       // iterations in the calibration launch (0: none)
  int default_iters;   // iterations per launch when not calibrated and not given
  int kernel_timer;    // the kernels stamp %globaltimer at every iteration into S.times
  int (*prepare)(Run *r);    // local: fill, poison, reset
  int (*setup)(Run *r);      // collective on every PE after the first agreement (may be null)
  int (*before_launch)(Run *r);  // local, before the barrier of a synchronised launch (may be null)
  int64_t (*bytes)(Run *r);        // payload this PE moved per operation
  int64_t (*work_set)(Run *r);     // bytes of the largest buffer one GPU serves
  // per_op_launches: a timed launch is iters launches of one operation each
  // (a collective per launch, a MoE step): no launch overhead to amortise,
  // so a calibrated launch loops at most NB_PER_OP_ITERS (may be null).
  int (*per_op_launches)(Run *r);
  const SideWork *side;  // work beside the timed launches (null: none)
};

constexpr bool family_complete(const Family &f) {
  return f.name && f.validate && f.active && f.synced && f.prepare && f.bytes && f.work_set && (f.cal_iters > 0 || f.default_iters > 0) &&
         (!f.side || (f.side->arm && f.side->disarm && f.side->end));
}
#define NB_FAMILY(f) \
  static_assert(family_complete(f), #f ": a family needs its name, validate, active, synced, prepare, bytes, work_set and an iteration count")

#define NB_PER_OP_ITERS 100

// A check: what an operation's result must be, run on every PE after the
// timed launches. verify counts into res the elements of this PE's memory
// that differ from what should have landed there (a PE where nothing of
// the operation lands checks nothing and returns 0; collective only where
// its family says so). corrupt damages one element of what verify reads on
// this PE (nothing where verify reads nothing): the GPU test runs every
// entry with args.corrupt set, and its check must then report a mismatch.
struct Check {
  const char *what;  // what it checks, for messages and `list`
  int (*verify)(Run *r, nb_result *res);
  int (*corrupt)(Run *r);
  // reset (may be null: the family prepares it) sets what verify reads to
  // where the operation starts from (the atomics' counters), on every PE
  // before the first launch of a point.
  int (*reset)(Run *r);
};

// Region: the n elements of `elem` bytes at p (device memory) that a check
// reads on this PE; p == nullptr: nothing lands on this PE.
struct Region {
  void *p;
  int64_t n;
  int elem;
};

struct OpEntry {
  int op;            // the family's private code (NB_OP_* of its file)
  const char *name;  // the name the Go side asks for (nb_args.op)
  const Family *family;
  int traits;          // T_*
  const Check *check;  // never null: the constructor takes a Check
  int (*launch)(Run *r, int iters);
  // Every entry is written {code, name, &family, traits, check, launch}: no
  // field has a default, so an entry without its check does not compile.
  constexpr OpEntry(int op_, const char *name_, const Family *family_, int traits_, const Check &check_,
                    int (*launch_)(Run *, int))
      : op(op_), name(name_), family(family_), traits(traits_), check(&check_), launch(launch_) {}
};

// checked: every entry of a table names a check with a verify, and a
// corrupt unless it leaves no output (T_NO_OUTPUT). Each table asserts it.
template <size_t N>
constexpr bool checked(const OpEntry (&t)[N]) {
  for (size_t i = 0; i < N; i++) {
    if (!t[i].check->verify) return false;
    if (!(t[i].traits & T_NO_OUTPUT) && !t[i].check->corrupt) return false;
  }
  return true;
}
#define NB_CHECKED(t) static_assert(checked(t), #t ": an entry whose check cannot verify, or cannot be corrupted")

static int has(const Run *r, int trait) { return (r->e->traits & trait) != 0; }

// put_value gives the point a named value (nb_result.values) in a unit of
// the Go side's ("s", "B/s", "1"), which reads it as a number by its name.
// A value that does not fit (the array full, a name or unit too long)
// fails the point and names it: never a silent drop.
static int put_value(nb_result *res, const char *name, const char *unit, double v) {
  if (res->n_values < 0 || res->n_values >= NB_MAX_VALUES)
    return fail(NB_ERR, "the value %s does not fit: a point's result holds %d values", name, NB_MAX_VALUES);
  nb_value *o = &res->values[res->n_values];
  if (strlen(name) >= sizeof o->name || strlen(unit) >= sizeof o->unit)
    return fail(NB_ERR, "the value %s (%s): a name holds %zu bytes, a unit %zu", name, unit, sizeof o->name - 1, sizeof o->unit - 1);
  o->value = v;
  snprintf(o->name, sizeof o->name, "%s", name);
  snprintf(o->unit, sizeof o->unit, "%s", unit);
  res->n_values++;
  return 0;
}

// pair_roles gives this PE its role in the point's pair: args.initiator
// issues towards args.peer (one PE: both, a loopback), and with both_ways
// the peer issues back towards the initiator at the same time; every other
// PE idles (target -1).
static void pair_roles(Run *r, int both_ways) {
  const Args *a = r->a;
  r->target = -1;
  if (S.me == a->initiator) r->target = a->peer;
  else if (both_ways && S.me == a->peer) r->target = a->initiator;
  r->initiator = r->target >= 0;
}

// The floors take NB_FLOOR_HOPS dependent loads an iteration, between two
// stamps: a stamp a hop (a %globaltimer read and a store on the chain's
// critical path) would lift the cache-served floor it measures.
#define NB_FLOOR_HOPS 32

// The scope groups of a launch: its CTAs, warps or threads.
static int scope_groups(const Args *a) {
  if (a->scope == NB_SCOPE_BLOCK) return a->ctas;
  if (a->scope == NB_SCOPE_WARP) return a->ctas * (a->threads / 32);
  return a->ctas * a->threads;
}

// Operations per loop iteration: one, one per thread for counters, the
// hops of a floor's iteration.
static int ops_per_iter(const Run *r) {
  if (has(r, T_COUNTERS)) return r->a->ctas * r->a->threads;
  if (has(r, T_MESSAGES)) return scope_groups(r->a);
  if (has(r, T_FLOOR)) return NB_FLOOR_HOPS;
  return 1;
}

// ---------------------------------------------------------------------------
// TMA's shared-memory buffers start on a TMA_ALIGN line: TMA bulk copies
// into stages off a 32-byte multiple of a 128-byte line (16 or 48 bytes
// past it) run at a fraction of the rate (the rule persm/tma/stage-offset
// measures: docs/bytes-per-sm.md; a line meets it), and the shim's
// relocatable build puts a kernel's dynamic shared array right after its
// static shared memory, rounded only to 16 bytes whatever the array's
// __align__ says (one static int is enough to put the stages off the
// line). A kernel declares its dynamic array
// __align__(16) (declared 128, the compiler folds the alignment below to
// nothing), launches with TMA_ALIGN bytes of slack, and takes its buffer
// from tma_aligned.
#define TMA_ALIGN 128
__device__ static inline uint8_t *tma_aligned(uint8_t *dyn) {
  uint32_t at = (uint32_t)__cvta_generic_to_shared(dyn);
  return dyn + ((TMA_ALIGN - (at & (TMA_ALIGN - 1))) & (TMA_ALIGN - 1));
}

// In-kernel stamps: %globaltimer read in the kernels. The host takes the
// differences of consecutive stamps: back-to-back periods that cover the
// whole loop, so their mean is the launch's time per iteration, the events
// timer's figure, and their spread the iterations'. The host zeroes the
// stamps before each timed launch (timed_launch, outside the events).

__device__ static inline uint64_t gtimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

// stamp: the one-CTA kernels (the latency families, the floors) stamp
// every iteration, thread 0 with a plain store: an atomic max there would
// lift the cache-served floor and the round trips it stamps.
__device__ static inline void stamp(int64_t *times, int it) {
  if (blockIdx.x == 0 && threadIdx.x == 0) times[it] = (int64_t)gtimer();
}

// A kernel of many CTAs stamps its launch, not each iteration: CTA 0 writes
// t[0] when it starts, and every CTA raises t[1] when it ends (an atomic max,
// once a CTA and launch). Stamps inside the loop cost more than they tell:
// the stamp's branch and its clobber end the overlap of one iteration's
// loads with the next's, and ptxas reorders a copy loop's loads and stores
// around them. A fused launch gives one period (its loop); a
// launch of one operation, given t = times + l, gives the operation's.
__device__ static inline void stamp_begin(int64_t *t) {
  if (blockIdx.x == 0 && threadIdx.x == 0) t[0] = (int64_t)gtimer();
}
__device__ static inline void stamp_end(int64_t *t) {
  if (threadIdx.x == 0) atomicMax((unsigned long long *)(t + 1), (unsigned long long)gtimer());
}
// stamp_end0: CTA 0 alone stamps the end, for the NVSHMEM collectives (one
// CTA), a launch of one multi-CTA AllReduce (its CTAs do equal shares, so
// CTA 0's end is the launch's) and MoE (one operation a launch: the next
// launch's start ends the period, and only the last launch's end is CTA
// 0's): every CTA's atomic on one word, awaited before a kernel of a few
// microseconds may end, would lengthen a launch of one operation.
__device__ static inline void stamp_end0(int64_t *t) {
  if (blockIdx.x == 0 && threadIdx.x == 0) t[1] = (int64_t)gtimer();
}
// stamp_end_of: the end of a launch of `iters` operations by CTAs that do not
// meet each other (the multi-CTA AllReduce: CTA b waits for CTA b of the
// other ranks only). One operation: CTA 0's end (stamp_end0, the cost
// above). Many: the last CTA's (stamp_end), whose one atomic a launch costs
// nothing per operation, while CTA 0 alone can end a fused launch of many
// operations well before the others (its end read under the events).
__device__ static inline void stamp_end_of(int64_t *t, int iters) {
  if (iters > 1) stamp_end(t);
  else stamp_end0(t);
}

// coresident: the CTAs of kernel k at `threads` a CTA that this GPU holds at
// once (0 where the runtime cannot say). A grid larger than that runs in
// waves: the first wave ends its iterations before the last starts, so
// the stamps do not time the launch's iterations, and each wave loops over
// its own share of the buffer.
template <typename K>
static int64_t coresident(K k, int threads, size_t smem = 0) {
  int per = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, threads, smem) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return (int64_t)per * S.sms;
}

// launched records a launch of a ctas-CTA grid of kernel k (smem bytes of
// dynamic shared memory a CTA): its residency, and whether its stamps time
// it.
template <typename K>
static void launched(Run *r, K k, int ctas, int threads, size_t smem = 0) {
  if (!r->resident_known) {  // once a point: a per-operation run launches it often
    r->resident = coresident(k, threads, smem);
    r->resident_known = 1;
  }
  r->stamped = r->resident >= ctas;
}


// A grid's working set: what its co-resident CTAs loop over, where the grid
// runs in waves (a share of the buffer), else the buffer.
static int64_t wave_share(const Run *r, int64_t bytes) {
  int64_t ctas = r->a->ctas;
  if (r->resident <= 0 || r->resident >= ctas) return bytes;
  return (int64_t)((double)bytes * (double)r->resident / (double)ctas);
}

// team_of_all splits NVSHMEM_TEAM_WORLD into a team of every PE (start 0,
// stride 1): collective, every PE.
static int team_of_all(nvshmem_team_t *t) { return nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, S.npes, nullptr, 0, t); }
