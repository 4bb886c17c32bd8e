// collectives.cuh: the collectives family: what every collective shares
// (its Family kColl, validation, the fill and check kernels, the launch by
// implementation, NCCL's communicator, per-operation or fused launches) and
// the list of collectives, NB_COLLECTIVES. A collective is one file,
// coll_<name>.cuh, included below, and one line in that list; its file
// holds all of it, in the style of nccl-tests' one file per collective:
// its counts rule, its source and expected output (one generator), its
// NVSHMEM kernel and on-stream call, its NCCL call (and the NCCL functions
// it needs, NcclFn), its Check and its table entry. Included by
// nvshbench.cu. Every PE runs every launch; all start each launch together.
//
// Launch modes: the host APIs (NVSHMEM on-stream, NCCL) make one launch per
// operation; the device implementations run either the same way, one kernel
// per operation (args.per_op), or with the iterations fused in one kernel.
// Only rows of one mode are compared with each other.
//
// A collective is a struct C with, and no defaults (a member left out does
// not compile; NB_COLLECTIVES asserts the rest):
//   static constexpr bool blocks      its counts: args.size is the whole output, a block of size / PEs from
//                                     every PE (NVSHMEM's and NCCL's count is the block; its entry states
//                                     T_BLOCKS), else every PE's count is args.size
//   static constexpr bool all_dtypes  float, half and bf16 (else float only)
//   static const void *device(const Args *)   its one-CTA NVSHMEM kernel (k_dev_*(dst, src, count, iters, stamps))
//   static int stream(const Args *, int64_t count, cudaStream_t)             NVSHMEM on-stream
//   static ncclResult_t nccl(const Args *, int64_t count, ncclComm_t, cudaStream_t)  NCCL, one operation
// A collective that moves a payload (T_PAYLOAD) has its generator, which
// the fill and its check both use:
//   __host__ __device__ static float source(int64_t i, int pe, CollShape g)  element i of PE pe's source
//   __host__ __device__ static float want(int64_t i, int me, CollShape g)    element i of PE me's output
// and its check verifies it (NB_CHECK(..., coll_output, coll_verify<C>); a
// collective whose output is not args.size bytes reads its own
//   static Region output(Run *)                                              what its check reads
// instead of coll_output).
// One that does not (the barrier) prepares what its own check needs:
//   static int prepare(Run *)
// An AllReduce of our own kernels (our multi-CTA, NCCL's device API) also has
// multi_validate, multi_setup and multi (see coll_allreduce.cuh).
// One that NCCL's copy engines can run (NB_IMPL_NCCL_CE, newer_nccl.cuh)
// names the entry point that selects them:
//   static constexpr const char *nccl_ce    its nccl<Coll>Config ("ncclAllGatherConfig")

// --- the values: small integers, so every sum is exact in float, half and bf16
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

// What a generator sees of a point: the PEs, the seed, and the elements of
// one PE's block (with blocks; else every element).
struct CollShape {
  int npes;
  int64_t seed;
  int64_t block;
};

// k_cfill writes PE pe's source, k_ccheck counts the elements of PE me's
// output that differ from what the generator of C says.
template <typename C, typename T>
__global__ void k_cfill(T *b, int64_t n, int pe, CollShape g) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    b[i] = from_f<T>(C::source(i, pe, g));
}

template <typename C, typename T>
__global__ void k_ccheck(const T *b, int64_t n, int me, CollShape g, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (to_f<T>(b[i]) != C::want(i, me, g)) mismatch(cnt, i);
}

// A collective has a payload when it has a generator.
template <typename C, typename = void> struct coll_payload : std::false_type {};
template <typename C>
struct coll_payload<C, std::void_t<decltype(&C::source), decltype(&C::want)>> : std::true_type {};

// What every collective has (a member left out: the assertion says which file).
template <typename C, typename = void> struct coll_interface : std::false_type {};
template <typename C>
struct coll_interface<C, std::void_t<decltype(C::blocks), decltype(C::all_dtypes), decltype(C::device((const Args *)nullptr)),
                                     decltype(C::stream((const Args *)nullptr, 0, cudaStream_t{})),
                                     decltype(C::nccl((const Args *)nullptr, 0, ncclComm_t{}, cudaStream_t{}))>>
    : std::is_same<decltype(C::nccl((const Args *)nullptr, 0, ncclComm_t{}, cudaStream_t{})), ncclResult_t> {};

// A collective on a team of its own splits it in its setup (collective).
template <typename C, typename = void> struct coll_team : std::false_type {};
template <typename C> struct coll_team<C, std::void_t<decltype(&C::team_setup)>> : std::true_type {};

// NCCL's copy-engine path (newer_nccl.cuh): a collective that names its entry point.
template <typename C, typename = void> struct coll_ce : std::false_type {};
template <typename C> struct coll_ce<C, std::void_t<decltype(C::nccl_ce)>> : std::true_type {};

// The AllReduce's own kernels (our multi-CTA, NCCL's device API).
template <typename C, typename = void> struct coll_multi : std::false_type {};
template <typename C> struct coll_multi<C, std::void_t<decltype(&C::multi)>> : std::true_type {};

// The elements of args.size (per PE; with blocks, of the whole output) and
// the count each PE gives NVSHMEM and NCCL: the collective's counts rule.
static int64_t coll_elems(const Args *a) { return a->size / esize(a->dtype); }
template <typename C>
static int64_t coll_count(int64_t n) {
  return C::blocks ? n / S.npes : n;
}
template <typename C>
static CollShape coll_shape(const Args *a, int64_t n) {
  return CollShape{S.npes, a->seed, coll_count<C>(n)};
}

// coll_fill writes this PE's source of C (size bytes) at p: S.src, or the
// NCCL window of the device API's AllReduce.
template <typename C>
static int coll_fill(Run *r, void *p) {
  const Args *a = r->a;
  int64_t n = coll_elems(a);
  with_dtype(a->dtype, [&](auto t) {
    using T = decltype(t);
    k_cfill<C, T><<<1024, 256, 0, S.stream>>>((T *)p, n, S.me, coll_shape<C>(a, n));
  });
  CKLAUNCH("collective fill");
  return 0;
}

// The output every PE checks: size bytes of elements of the point's dtype,
// in S.dst (or, on NCCL's copy-engine path, in its destination window).
static Region coll_output(Run *r) {
  return region(r->a->impl == NB_IMPL_NCCL_CE ? ce_dst() : S.dst, coll_elems(r->a), esize(r->a->dtype));
}

// coll_verify: the check of a collective with a payload, against its generator.
template <typename C>
static int coll_verify(Run *r, Region w, nb_result *res) {
  const Args *a = r->a;
  int64_t n = w.n;
  return counted(
      n, res,
      [&](unsigned long long *cnt) {
        with_dtype(a->dtype, [&](auto t) {
          using T = decltype(t);
          k_ccheck<C, T><<<1024, 256, 0, S.stream>>>((const T *)w.p, n, S.me, coll_shape<C>(a, coll_elems(a)), cnt);
        });
      },
      [&](unsigned long long first, unsigned long long wrong) {
        snprintf(res->detail, sizeof res->detail, "element %llu wrong (%llu of %lld)", first, wrong, (long long)n);
      });
}

// ---------------------------------------------------------------------------
// The family. Its validate, prepare and setup are each collective's
// (coll_validate<C>, ...), found through the entry's launch (kCollOf below).
static int coll_device_impl(int impl) { return impl != NB_IMPL_NVSHMEM_STREAM && impl != NB_IMPL_NCCL && impl != NB_IMPL_NCCL_CE; }
static int coll_multi_impl(int impl) {
  return impl == NB_IMPL_OUR_ONESHOT || impl == NB_IMPL_OUR_TWOSHOT || impl == NB_IMPL_LSA_ONESHOT || impl == NB_IMPL_LSA_TWOSHOT;
}

template <typename C>
static int coll_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = 1;  // every PE runs and times (PE 0's samples are reported)
  r->target = -1;
  int es = esize(a->dtype);
  if (has(r, T_PAYLOAD) && (a->size <= 0 || a->size > S.buf || a->size % es))
    return fail(NB_ERR, "size %lld: 1..%lld and a multiple of %d", (long long)a->size, (long long)S.buf, es);
  if (C::blocks && (a->size / es) % S.npes)
    return fail(NB_UNREACHABLE, "%s: %lld elements do not divide by %d PEs", r->e->name, (long long)(a->size / es), S.npes);
  if (a->threads <= 0 || a->threads > 1024 || a->ctas <= 0 || a->ctas > NB_MAX_CTAS) return fail(NB_ERR, "launch %d x %d invalid", a->ctas, a->threads);
  if (a->impl < NB_IMPL_NVSHMEM_DEVICE || a->impl > NB_IMPL_NCCL_CE) return fail(NB_ERR, "unknown implementation %d", a->impl);
  if (!a->per_op && !coll_device_impl(a->impl)) return fail(NB_ERR, "a host API makes one launch per operation: no fused form");
  if (!C::all_dtypes && a->dtype != NB_DT_F32) return fail(NB_ERR, "%s: float only", r->e->name);
  if (coll_multi_impl(a->impl)) {
    if constexpr (coll_multi<C>::value) return C::multi_validate(r);
    else return fail(NB_ERR, "%s: our multi-CTA kernels and NCCL's device API do AllReduce only", r->e->name);
  }
  if (a->impl == NB_IMPL_NCCL_CE) {
    if constexpr (coll_ce<C>::value) return ce_validate(r);
    else return fail(NB_ERR, "%s: NCCL's copy-engine path does AllGather, AlltoAll, Scatter and Gather only", r->e->name);
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

// prepare: the source filled (and the output poisoned, when verified), or
// what the check of a collective without a payload needs.
template <typename C>
static int coll_prepare(Run *r) {
  if (r->a->impl == NB_IMPL_NCCL_CE) return 0;  // its windows, filled at setup (coll_setup)
  if constexpr (coll_payload<C>::value) {
    if (int rc = coll_fill<C>(r, S.src)) return rc;
    if (r->a->verify) return poison_dst(r->a->size);
    return 0;
  } else {
    return C::prepare(r);
  }
}

static int nccl_setup(Run *r) {
  char key[64];
  comm_key(r->a, key, sizeof key);
  return comm_make(key, r->a->nccl_algo, r->a->nccl_proto);
}

template <typename C>
static int coll_setup(Run *r) {
  if (r->a->impl == NB_IMPL_NCCL) return nccl_setup(r);
  if constexpr (coll_ce<C>::value) {
    // Collective: the windows (made at the first such point), this PE's
    // source in its source window and the destination poisoned.
    if (r->a->impl == NB_IMPL_NCCL_CE) return ce_setup(r, C::nccl_ce, coll_fill<C>);
  }
  if constexpr (coll_team<C>::value) {
    if (int rc = C::team_setup(r)) return rc;  // collective: its team (coll_teamsync.cuh)
  }
  if constexpr (coll_multi<C>::value) {
    if (coll_multi_impl(r->a->impl)) return C::multi_setup(r);
  }
  return 0;
}

// iters operations of collective C on S.stream, by args.impl: a device
// implementation fused in one kernel, or (per_op, and every host API) one
// launch per operation. The device implementations stamp (common.cuh):
// a fused loop its groups of iterations, launch l of a per-operation run
// at S.times + l.
template <typename C>
static int coll_launch(Run *r, int iters) {
  const Args *a = r->a;
  int64_t n = coll_elems(a);
  int64_t count = coll_count<C>(n);  // NVSHMEM's and NCCL's count per PE
  cudaStream_t s = S.stream;
  int launches = a->per_op ? iters : 1, each = a->per_op ? 1 : iters;
  switch (a->impl) {
  case NB_IMPL_NVSHMEM_DEVICE: {
    size_t nn = (size_t)count;
    int it = each;
    void *dst = S.dst, *src = S.src;
    int64_t *st = S.times;
    void *args[] = {&dst, &src, &nn, &it, &st};
    r->resident = 1;
    r->stamped = 1;  // one CTA
    for (int l = 0; l < launches; l++) {
      if (a->per_op) st = S.times + l;
      int rc = nvshmemx_collective_launch(C::device(a), dim3(1), dim3(a->threads), args, 0, s);
      if (rc != 0) return fail(NB_ERR, "nvshmemx_collective_launch: %d", rc);
      CKLAUNCH("device collective");
    }
    return 0;
  }
  case NB_IMPL_OUR_ONESHOT:
  case NB_IMPL_OUR_TWOSHOT:
  case NB_IMPL_LSA_ONESHOT:
  case NB_IMPL_LSA_TWOSHOT:  // validated: only a collective with multi
    if constexpr (coll_multi<C>::value) {
      for (int l = 0; l < launches; l++)
        if (int rc = C::multi(r, n, each, a->per_op ? S.times + l : S.times)) return rc;
      return 0;
    }
    break;
  case NB_IMPL_NVSHMEM_STREAM:
    for (int i = 0; i < iters; i++)
      if (int rc = C::stream(a, count, s)) return fail(NB_ERR, "NVSHMEM on-stream %s: %d", r->e->name, rc);
    return 0;
  case NB_IMPL_NCCL: {
    char key[64];
    comm_key(a, key, sizeof key);
    CommEntry *ce = comm_find(key);
    if (!ce || ce->failed[0]) return fail(NB_ERR, "no NCCL communicator %s", key);
    for (int i = 0; i < iters; i++) NCK(C::nccl(a, count, ce->comm, s));
    return 0;
  }
  case NB_IMPL_NCCL_CE:  // validated: only a collective with nccl_ce
    return ce_launch(count, iters);
  }
  return fail(NB_ERR, "%s: implementation %d unknown here", r->e->name, a->impl);
}

static int coll_active(Run *) { return 1; }
static int coll_synced(Run *) { return 1; }
static int64_t coll_bytes(Run *r) { return has(r, T_PAYLOAD) ? r->a->size : 0; }

// The largest buffer one GPU serves: each PE's source (a one-shot reads every
// peer's) and destination are size bytes.
static int64_t coll_work_set(Run *r) { return has(r, T_PAYLOAD) ? r->a->size : 0; }

// A per-operation collective makes a launch per operation; a fused one loops.
static int coll_per_op_launches(Run *r) { return r->a->per_op; }

static int coll_family_validate(Run *r);
static int coll_family_prepare(Run *r);
static int coll_family_setup(Run *r);

static constexpr Family kColl = {.name = "collectives",
                                 .validate = coll_family_validate,
                                 .active = coll_active,
                                 .synced = coll_synced,
                                 .cal_iters = 2,
                                 .prepare = coll_family_prepare,
                                 .setup = coll_family_setup,
                                 .bytes = coll_bytes,
                                 .work_set = coll_work_set,
                                 .per_op_launches = coll_per_op_launches};
NB_FAMILY(kColl);

// ---------------------------------------------------------------------------
// The collectives: a file each (its struct C and its entry kC), a line each
// in NB_COLLECTIVES. The order is the table's (and the guide's patterns').
#include "coll_allreduce.cuh"
#include "coll_allgather.cuh"
#include "coll_alltoall.cuh"
#include "coll_broadcast.cuh"
#include "coll_barrier.cuh"
#include "coll_reducescatter.cuh"
#include "coll_sync.cuh"
#include "coll_teamsync.cuh"

#define NB_COLLECTIVES(X) X(AllReduce) X(AllGather) X(AllToAll) X(Broadcast) X(Barrier) X(ReduceScatter) X(Sync) X(TeamSync)

// A payload collective's check is its own generator's, read from its output:
// args.size bytes (coll_output), or its own output() where it has one (a
// reduce-scatter's block).
template <typename C, typename = void> struct coll_own_output : std::false_type {};
template <typename C> struct coll_own_output<C, std::void_t<decltype(&C::output)>> : std::true_type {};
template <typename C>
constexpr bool coll_own_check(const OpEntry &e) {
  if constexpr (!coll_payload<C>::value) return true;
  else if constexpr (coll_own_output<C>::value) return e.check->verify == CheckAt<C::output, coll_verify<C>>::verify;
  else return e.check->verify == CheckAt<coll_output, coll_verify<C>>::verify;
}

#define NB_COLL_ASSERT(C)                                                                                                   \
  static_assert(coll_interface<C>::value, #C ": a collective has blocks, all_dtypes, device, stream and nccl (collectives.cuh)"); \
  static_assert(k##C.family == &kColl && k##C.launch == coll_launch<C>, #C ": its entry k" #C " is {..., &kColl, ..., coll_launch<" #C ">}"); \
  static_assert(((k##C.traits & T_BLOCKS) != 0) == C::blocks, #C ": its entry states T_BLOCKS exactly when " #C "::blocks (its counts)");  \
  static_assert(((k##C.traits & T_PAYLOAD) != 0) == coll_payload<C>::value, #C ": T_PAYLOAD exactly when it has a generator (source, want)"); \
  static_assert(coll_own_check<C>(k##C), #C ": its check verifies its own generator (NB_CHECK(..., coll_output, coll_verify<" #C ">))");
NB_COLLECTIVES(NB_COLL_ASSERT)
#undef NB_COLL_ASSERT

#define NB_COLL_ENTRY(C) k##C,
static constexpr OpEntry kCollOps[] = {NB_COLLECTIVES(NB_COLL_ENTRY)};
#undef NB_COLL_ENTRY
NB_CHECKED(kCollOps);

// A collective's own validate, prepare and setup, by its launch.
struct CollOf {
  int (*launch)(Run *, int);
  int (*validate)(Run *);
  int (*prepare)(Run *);
  int (*setup)(Run *);
};
#define NB_COLL_OF(C) CollOf{coll_launch<C>, coll_validate<C>, coll_prepare<C>, coll_setup<C>},
static constexpr CollOf kCollOf[] = {NB_COLLECTIVES(NB_COLL_OF)};
#undef NB_COLL_OF

static const CollOf *coll_of(const Run *r) {
  for (const CollOf &c : kCollOf)
    if (c.launch == r->e->launch) return &c;
  return nullptr;
}

static int coll_family_validate(Run *r) {
  const CollOf *c = coll_of(r);
  return c ? c->validate(r) : fail(NB_ERR, "%s: not in NB_COLLECTIVES", r->e->name);
}
static int coll_family_prepare(Run *r) { return coll_of(r)->prepare(r); }  // validated: registered
static int coll_family_setup(Run *r) { return coll_of(r)->setup(r); }
