// pm_mech.cuh: bytes per SM's transfer mechanisms and compute kernels, each
// declared once (the family, persm.cuh, runs them). A mechanism is a struct
// and a word of NB_PM_MECHANISMS; the list makes the dispatch (pm_with),
// the transfer test (pm_is_mech), the destination (pm_dst) and the load/
// store and budget rules (persm.cuh's pm_validate), and the table's rows
// (kPMOps); the Go side reads the list and the structs' facts as it reads
// the collectives (cuda/shim/persm.go). Every member is required: a struct
// without one does not compile (pm_mechanism, below).
//
// A mechanism:
//   static constexpr int code         its code: the entry's, and a partner's args.impl (codes distinct: asserted)
//   static constexpr const char *op   its entry's name ("rma.pm_st")
//   static constexpr PmDst dst        where its bytes land: the peer's buffer through nvshmem_ptr (peer), NVSHMEM's
//                                     symmetric address of a PE (symmetric), the peer's NCCL window through its
//                                     LSA pointer (lsa)
//   static constexpr bool loadstore   it needs a load/store mapping to the peer (its entry's T_LOADSTORE)
//   static constexpr bool sms         it runs on a budget of SMs, one CTA an SM; false: no SM of ours (the copy
//                                     engine: issued from the host, T_HOST, beside a compute kernel on a second
//                                     stream: pm_ce.cuh)
//   static constexpr int64_t align    the sizes it moves are multiples of it
//   static int validate(Run *)        what this GPU and build must have for it (0: nothing more)
//   static int setup(Run *)           after agreement 1, on every PE (collective where it needs: LSA's windows)
// and, with sms, its kernel side:
//   static constexpr PmSplit split    how the budget's CTAs share a launch's bytes (PmSplit, below)
//   static constexpr bool staged      its bytes pass through stages in the CTA's shared memory (TMA): its
//                                     stage-offset row places them off a 128-byte line (args.stage_offset)
//   __device__ static void begin(uint8_t *smem)   once a CTA before its first move (TMA: its stages' barriers)
//   __device__ static void move(uint8_t *dst, const uint8_t *src, int64_t len, PmShare sh, int peer, uint8_t *smem,
//                               uint32_t &phases)
//                                     one CTA (every thread) moves its share of len > 0 bytes (sh: a strided
//                                     split's place of the CTA among those sharing them; a chunk's CTA has them
//                                     all), delivered on return (smem: the CTA's stages, TMA-aligned plus the
//                                     point's stage offset; phases: its stages' parities)
// without, its copy on a stream (the timed copies, the fed ones, the SM check's):
//   static cudaError_t copy(uint8_t *dst, const uint8_t *src, int64_t n, cudaStream_t s)
//
// A compute kernel (the partner beside a transfer; NB_PM_COMPUTES):
//   static constexpr int code, const char *op   as a mechanism's
//   static constexpr int64_t outputs            the floats each compute CTA writes
//   __device__ static float start(int64_t i)    output i before any iteration: after n iterations of its CTA it is
//                                               start(i) + n, exactly (k_pm_check)
//   template <typename Loop> __device__ static void run(const PmArgs &p, int64_t k, Loop loop)
//                                               compute CTA k: its state, loop(iter) running the iterations its
//                                               role asks for, its outputs written

#include <mma.h>

#define PM_THREADS 512
#define PM_TILE (16 << 10)  // bytes of one TMA copy (one stage)
#define PM_STAGES 8
// 128 KiB of stages + the barriers + slack to align the stages
// (tma_aligned, common.cuh) and to offset them: one CTA an SM.
// The stages may sit up to PM_MAX_OFFSET - 16 bytes past the line (a
// staged mechanism's stage-offset row: args.stage_offset).
#define PM_MAX_OFFSET 128
#define PM_SMEM (PM_STAGES * PM_TILE + 128 + TMA_ALIGN + PM_MAX_OFFSET)
#define PM_ACC 8
#define PM_FMA_STEPS 256
#define PM_MMA_PAIRS 128

// Where a mechanism's bytes land (pm_dst; the check reads them there).
enum class PmDst { peer, symmetric, lsa };

// How the budget's CTAs share a launch's bytes:
//   strided  every thread of the budget takes the 16-byte words t, t + T, t + 2T, ... of the
//            whole buffer (T: the budget's threads): the CTAs walk it together, a grid-stride
//            loop over the budget (faster at full budget than a run a CTA: docs/bytes-per-sm.md)
//   chunks   CTA k moves one contiguous run (pm_chunk), every run starting at a multiple of
//            PM_GRAIN: a bulk copy or a library call a CTA
enum class PmSplit { strided, chunks };

// A strided split's place of a CTA among the CTAs that share a range
// (cta of ctas); a chunk's CTA has its range alone (0 of 1).
struct PmShare {
  int cta, ctas;
};

// Chunk boundaries fall on multiples of PM_GRAIN (a TMA tile): a run that
// starts off a 128-byte line straddles lines in every access, and a budget
// that does not divide the size evenly (66 SMs) ran far below a
// power-of-two one (docs/bytes-per-sm.md). The grain is halved, to 16
// bytes at the least, where the budget's CTAs would otherwise go without.
#define PM_GRAIN PM_TILE

// pm_chunk: CTA k's run of the budget's g CTAs: the buffer's grains split
// as evenly as they go (each CTA the same count, or one more), clipped to
// size (the last run takes the remainder; a CTA past the end gets none).
__host__ __device__ static inline void pm_chunk(int64_t size, int g, int k, int64_t *off, int64_t *len) {
  int64_t grain = PM_GRAIN;
  while (grain > 16 && size < grain * g) grain >>= 1;
  int64_t units = (size + grain - 1) / grain, a = units * k / g * grain, b = units * (k + 1) / g * grain;
  *off = a < size ? a : size;
  *len = (b < size ? b : size) - *off;
}

// A copy on a stream (a mechanism without SMs: its copy).
using PmCopy = cudaError_t (*)(uint8_t *, const uint8_t *, int64_t, cudaStream_t);

// What a fused launch's kernel gets (k_pm, pm_kernels.cuh).
struct PmArgs {
  uint8_t *dst;
  const uint8_t *src;
  int64_t size;
  int iters, peer, budget;
  int stage_offset;  // a staged mechanism's stages this many bytes past their 128-byte line (args.stage_offset)
  unsigned long long want;  // timed CTAs: the background stops once done reaches it
  unsigned long long *done;
  uint64_t *counts;
  float *out;
  float minus1, one;  // -1 and 1, not known to the compiler
  int64_t *st;
  // Beside the copy engine: want is the launch's sequence number, which the
  // stop write puts in done; the last CTA to start writes it to host[0]
  // (mapped host memory), a CTA that ran out PM_BG_DEADLINE_NS to host[1].
  unsigned long long *started;
  unsigned long long *host;
};

// --- TMA: one thread of a CTA issues, the rest wait at the CTA's barriers.
// sm_90's instructions: a build for an older architecture as well
// (NVSHBENCH_CUDA_ARCHS) compiles them out there, and PmTma::validate
// refuses TMA on such a GPU.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define PM_ASM(...) asm volatile(__VA_ARGS__)
#else
#define PM_ASM(...) __trap()
#endif
__device__ static inline uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ static inline void mbar_wait(uint64_t *bar, uint32_t parity) {
  uint32_t ok = 0;
  while (!ok)
    PM_ASM("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
}

// Stage s receives tile t's bytes; its barrier completes when they landed.
__device__ static inline void tma_load(uint8_t *smem, const uint8_t *g, uint32_t bytes, uint64_t *bar) {
  PM_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
  PM_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_u32(smem)),
               "l"(g), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}

__device__ static inline void tma_store(uint8_t *g, const uint8_t *smem, uint32_t bytes) {
  PM_ASM("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(g), "r"(smem_u32(smem)), "r"(bytes) : "memory");
  PM_ASM("cp.async.bulk.commit_group;" ::: "memory");
}

// tma_copy moves len bytes (16-byte multiples, 16-byte aligned) src -> dst
// through the stages: up to PM_STAGES - 1 loads in flight while the stores
// drain; a stage is loaded again once its store has read it (wait_group.read
// 1: every store but the newest has read its stage). It returns when every
// store has landed (wait_group 0), visible to the generic proxy. The stages'
// barriers sit after them (tma_bars), initialised once a CTA (tma_init).
__device__ static inline uint64_t *tma_bars(uint8_t *smem) { return (uint64_t *)(smem + PM_STAGES * PM_TILE); }

__device__ static void tma_begin(uint8_t *smem) {
  if (threadIdx.x == 0) {
    uint64_t *bars = tma_bars(smem);
    for (int s = 0; s < PM_STAGES; s++) PM_ASM("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bars + s)) : "memory");
    PM_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
    (void)bars;  // compiled out below sm_90
  }
  __syncthreads();
}

__device__ static void tma_copy(uint8_t *dst, const uint8_t *src, int64_t len, uint8_t *smem, uint64_t *bars, uint32_t &phases) {
  int64_t n = (len + PM_TILE - 1) / PM_TILE;
  auto bytes = [&](int64_t t) { return (uint32_t)(len - t * PM_TILE < PM_TILE ? len - t * PM_TILE : PM_TILE); };
  auto load = [&](int64_t t) {
    int s = (int)(t % PM_STAGES);
    tma_load(smem + s * PM_TILE, src + t * PM_TILE, bytes(t), bars + s);
  };
  for (int64_t t = 0; t < n && t < PM_STAGES; t++) load(t);
  for (int64_t t = 0; t < n; t++) {
    int s = (int)(t % PM_STAGES);
    mbar_wait(bars + s, (phases >> s) & 1);
    phases ^= 1u << s;
    tma_store(dst + t * PM_TILE, smem + s * PM_TILE, bytes(t));
    if (t >= 1 && t - 1 + PM_STAGES < n) {
      PM_ASM("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load(t - 1 + PM_STAGES);
    }
  }
  PM_ASM("cp.async.bulk.wait_group 0;" ::: "memory");
  PM_ASM("fence.proxy.async.global;" ::: "memory");
}

// ---------------------------------------------------------------------------
// The mechanisms.

// st: 16-byte SM stores into the peer (group_copy: four loads in flight a
// thread) over the budget's threads together, a system fence.
struct PmSt {
  static constexpr int code = 100;
  static constexpr const char *op = "rma.pm_st";
  static constexpr PmDst dst = PmDst::peer;
  static constexpr bool loadstore = true;
  static constexpr bool sms = true;
  static constexpr int64_t align = 1;
  static constexpr PmSplit split = PmSplit::strided;
  static constexpr bool staged = false;
  static int validate(Run *) { return 0; }
  static int setup(Run *) { return 0; }
  __device__ static void begin(uint8_t *) {}
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare sh, int, uint8_t *, uint32_t &) {
    group_copy(d, s, len, sh.cta * blockDim.x + threadIdx.x, sh.ctas * blockDim.x);
    __threadfence_system();
  }
};

// st1: st with one 16-byte load in flight a thread (group_copy1: NVSHMEM's
// P2P copy loop), to set beside put: NVSHMEM's block put on a load/store
// peer is that loop, and a thread's loads in flight bound what one SM
// moves.
struct PmSt1 {
  static constexpr int code = 107;
  static constexpr const char *op = "rma.pm_st1";
  static constexpr PmDst dst = PmDst::peer;
  static constexpr bool loadstore = true;
  static constexpr bool sms = true;
  static constexpr int64_t align = 1;
  static constexpr PmSplit split = PmSplit::strided;
  static constexpr bool staged = false;
  static int validate(Run *) { return 0; }
  static int setup(Run *) { return 0; }
  __device__ static void begin(uint8_t *) {}
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare sh, int, uint8_t *, uint32_t &) {
    group_copy1(d, s, len, sh.cta * (int64_t)blockDim.x + threadIdx.x, sh.ctas * (int64_t)blockDim.x);
    __threadfence_system();
  }
};

// tma: cp.async.bulk global -> shared (an mbarrier a stage) -> global (bulk
// groups), one thread a CTA issuing; sm_90 has no global -> global bulk
// copy, so the bytes pass through shared memory (PM_STAGES stages of
// PM_TILE bytes).
struct PmTma {
  static constexpr int code = 101;
  static constexpr const char *op = "rma.pm_tma";
  static constexpr PmDst dst = PmDst::peer;
  static constexpr bool loadstore = true;
  static constexpr bool sms = true;
  static constexpr int64_t align = 16;
  static constexpr PmSplit split = PmSplit::chunks;
  static constexpr bool staged = true;
  static int validate(Run *) {
    int cc = 0;
    CK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, S.device));
    if (cc < 9) return fail(NB_UNREACHABLE, "TMA (cp.async.bulk) needs compute capability 9.0 or later; this GPU has %d.x", cc);
    return 0;
  }
  static int setup(Run *) { return 0; }
  __device__ static void begin(uint8_t *smem) { tma_begin(smem); }
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int, uint8_t *smem, uint32_t &phases) {
    if (threadIdx.x == 0) {
      tma_copy(d, s, len, smem, tma_bars(smem), phases);
      __threadfence_system();
    }
    __syncthreads();
  }
};

// put: nvshmemx_putmem_nbi_block + nvshmem_quiet, a chunk a CTA.
struct PmPut {
  static constexpr int code = 102;
  static constexpr const char *op = "rma.pm_put";
  static constexpr PmDst dst = PmDst::symmetric;
  static constexpr bool loadstore = false;
  static constexpr bool sms = true;
  static constexpr int64_t align = 1;
  static constexpr PmSplit split = PmSplit::chunks;
  static constexpr bool staged = false;
  static int validate(Run *) { return 0; }
  static int setup(Run *) { return 0; }
  __device__ static void begin(uint8_t *) {}
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int peer, uint8_t *, uint32_t &) {
    nvshmemx_putmem_nbi_block(d, s, len, peer);
    nvshmem_quiet();
  }
};

// lsa: 16-byte SM stores through ncclGetLsaPointer into the peer's NCCL
// window. Its setup makes the windows (collective: every PE) and resolves
// the peer's window as a plain address once a point (the kernels then store
// through it as st does through nvshmem_ptr's, split as st's).
static uint8_t *g_pm_lsa;  // the peer's NCCL window, as this PE's kernels address it
#if NB_NCCL_DEVICE
__global__ void k_pm_lsa_ptr(ncclWindow_t w, int lsa_peer, uint8_t **out) { *out = (uint8_t *)ncclGetLsaPointer(w, 0, lsa_peer); }
#endif
static int pm_lsa_setup(Run *r) {
  int st = nd_setup(r);
  if (st || !r->initiator) return st;
#if NB_NCCL_DEVICE
  k_pm_lsa_ptr<<<1, 1, 0, S.stream>>>(g_nd.wdst, nd_lsa_peer(g_nd.dc, r->target), (uint8_t **)S.stage);
  CKLAUNCH("LSA pointer");
  CK(cudaMemcpy(&g_pm_lsa, S.stage, sizeof g_pm_lsa, cudaMemcpyDeviceToHost));
  if (!g_pm_lsa) return fail(NB_UNREACHABLE, "ncclGetLsaPointer gave no address for PE %d", r->target);
#endif
  return 0;
}
struct PmLsa {
  static constexpr int code = 103;
  static constexpr const char *op = "rma.pm_lsa";
  static constexpr PmDst dst = PmDst::lsa;
  static constexpr bool loadstore = true;
  static constexpr bool sms = true;
  static constexpr int64_t align = 1;
  static constexpr PmSplit split = PmSplit::strided;
  static constexpr bool staged = false;
  static int validate(Run *) {
    if (int st = nd_headers()) return st;
    return nd_state();
  }
  static int setup(Run *r) { return pm_lsa_setup(r); }
  __device__ static void begin(uint8_t *) {}
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare sh, int, uint8_t *, uint32_t &) {
    group_copy(d, s, len, sh.cta * blockDim.x + threadIdx.x, sh.ctas * blockDim.x);
    __threadfence_system();
  }
};

// ce: the copy engine (cudaMemcpyAsync): no SM of ours, so args.ctas is no
// budget; whether the driver's copy needs one is checked, not assumed (its
// setup: pm_sm_check, pm_smcheck.cuh, on an initiator once a process for
// each target and size; a same-GPU copy may wait for a free CTA slot).
static int pm_sm_check(Run *r, PmCopy copy);
struct PmCe {
  static constexpr int code = 104;
  static constexpr const char *op = "rma.pm_ce";
  static constexpr PmDst dst = PmDst::peer;
  static constexpr bool loadstore = true;
  static constexpr bool sms = false;
  static constexpr int64_t align = 1;
  static int validate(Run *) { return 0; }
  static int setup(Run *r) { return r->initiator ? pm_sm_check(r, copy) : 0; }
  static cudaError_t copy(uint8_t *d, const uint8_t *s, int64_t n, cudaStream_t st) {
    return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st);
  }
};

#define NB_PM_MECHANISMS(X) X(PmSt) X(PmTma) X(PmPut) X(PmSt1) X(PmLsa) X(PmCe)

// ---------------------------------------------------------------------------
// The compute kernels, each with a result that depends on how much ran.

__device__ static inline float pm_fma_x0(int64_t c, int j) { return 0.5f * (float)((c * PM_ACC + j) % 251); }
__device__ static inline float pm_mma_x0(int64_t w) { return (float)(w % 61); }

// fma: every thread PM_ACC accumulators; an iteration is PM_FMA_STEPS steps
// of acc = fma(acc, -1, 0) on each (a sign flip: back to acc after an even
// count) and acc += 1: after n iterations acc = x0 + n, exactly.
struct PmFma {
  static constexpr int code = 105;
  static constexpr const char *op = "rma.pm_fma";
  static constexpr int64_t outputs = PM_THREADS * PM_ACC;
  __device__ static float start(int64_t i) { return pm_fma_x0(i / PM_ACC, (int)(i % PM_ACC)); }
  template <typename Loop>
  __device__ static void run(const PmArgs &p, int64_t k, Loop loop) {
    int64_t c = k * blockDim.x + threadIdx.x;
    float acc[PM_ACC];
#pragma unroll
    for (int j = 0; j < PM_ACC; j++) acc[j] = pm_fma_x0(c, j);
    loop([&] {
#pragma unroll 16
      for (int s = 0; s < PM_FMA_STEPS; s++)
#pragma unroll
        for (int j = 0; j < PM_ACC; j++) acc[j] = fmaf(acc[j], p.minus1, 0.0f);
#pragma unroll
      for (int j = 0; j < PM_ACC; j++) acc[j] += p.one;
    });
#pragma unroll
    for (int j = 0; j < PM_ACC; j++) p.out[c * PM_ACC + j] = acc[j];
  }
};

// mma: every warp a 16x16 fp32 accumulator C; an iteration is PM_MMA_PAIRS
// pairs of wmma bf16 16x16x16 C = A*B + C with A = ones and B = +ones then
// -ones (C + 16 - 16), then C += 1: after n iterations C = x0 + n, exactly.
struct PmMma {
  static constexpr int code = 106;
  static constexpr const char *op = "rma.pm_mma";
  static constexpr int64_t outputs = (PM_THREADS / 32) * 256;
  __device__ static float start(int64_t i) { return pm_mma_x0(i / 256); }
  template <typename Loop>
  __device__ static void run(const PmArgs &p, int64_t k, Loop loop) {
    using namespace nvcuda;
    int64_t w = k * (blockDim.x / 32) + threadIdx.x / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bp, bn;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(a, __float2bfloat16(p.one));
    wmma::fill_fragment(bp, __float2bfloat16(p.one));
    wmma::fill_fragment(bn, __float2bfloat16(p.minus1));
    wmma::fill_fragment(acc, pm_mma_x0(w));
    loop([&] {
      for (int s = 0; s < PM_MMA_PAIRS; s++) {
        wmma::mma_sync(acc, a, bp, acc);
        wmma::mma_sync(acc, a, bn, acc);
      }
      for (int e = 0; e < acc.num_elements; e++) acc.x[e] += p.one;
    });
    wmma::store_matrix_sync(p.out + w * 256, acc, 16, wmma::mem_row_major);
  }
};

#define NB_PM_COMPUTES(X) X(PmFma) X(PmMma)

// No partner: a transfer alone, or a compute kernel alone (code 0); no
// mechanism's work (sms: no transfer role).
struct PmNone {
  static constexpr int code = 0;
  static constexpr bool sms = false;
};

// ---------------------------------------------------------------------------
// What the lists give: the static assertions on every struct, the dispatch
// from a code to its struct, the transfer test and the entries' traits.

template <typename M, typename = void> struct pm_mechanism : std::false_type {};
template <typename M>
struct pm_mechanism<M, std::void_t<decltype(M::code), decltype(M::op), decltype(M::dst), decltype(M::loadstore), decltype(M::sms),
                                   decltype(M::align), decltype(M::validate((Run *)nullptr)), decltype(M::setup((Run *)nullptr))>>
    : std::integral_constant<bool, std::is_same_v<decltype(M::validate((Run *)nullptr)), int> &&
                                       std::is_same_v<decltype(M::setup((Run *)nullptr)), int>> {};
template <typename M, typename = void> struct pm_moves : std::false_type {};
template <typename M>
struct pm_moves<M, std::void_t<decltype(M::split), decltype(M::staged), decltype(M::begin((uint8_t *)nullptr)),
                               decltype(M::move((uint8_t *)nullptr, (const uint8_t *)nullptr, int64_t{}, PmShare{}, 0, (uint8_t *)nullptr,
                                                std::declval<uint32_t &>()))>>
    : std::integral_constant<bool, std::is_same_v<std::remove_cv_t<decltype(M::split)>, PmSplit> &&
                                       std::is_same_v<std::remove_cv_t<decltype(M::staged)>, bool>> {};
template <typename M, typename = void> struct pm_copies : std::false_type {};
template <typename M>
struct pm_copies<M, std::void_t<decltype(M::copy((uint8_t *)nullptr, (const uint8_t *)nullptr, int64_t{}, cudaStream_t{}))>>
    : std::is_same<decltype(M::copy((uint8_t *)nullptr, (const uint8_t *)nullptr, int64_t{}, cudaStream_t{})), cudaError_t> {};
template <typename C, typename = void> struct pm_compute : std::false_type {};
template <typename C>
struct pm_compute<C, std::void_t<decltype(C::code), decltype(C::op), decltype(C::outputs), decltype(C::start(int64_t{}))>>
    : std::true_type {};

#define PM_ASSERT_MECHANISM(M)                                                                                              \
  static_assert(pm_mechanism<M>::value, #M ": a mechanism states code, op, dst, loadstore, sms, align, validate and setup"); \
  static_assert(M::sms ? pm_moves<M>::value : pm_copies<M>::value, #M ": a mechanism on SMs has its split, staged, device begin and move, one without its copy"); \
  static_assert(M::code > 0 && M::align > 0, #M ": a code above 0 (0 is no partner), an alignment of at least 1");
#define PM_ASSERT_COMPUTE(C) \
  static_assert(pm_compute<C>::value && C::code > 0 && C::outputs > 0, #C ": a compute kernel states code, op, outputs, start and run");
NB_PM_MECHANISMS(PM_ASSERT_MECHANISM)
NB_PM_COMPUTES(PM_ASSERT_COMPUTE)
#undef PM_ASSERT_MECHANISM
#undef PM_ASSERT_COMPUTE

// Every code once over both lists.
#define PM_CODE(K) K::code,
constexpr int kPmCodes[] = {NB_PM_MECHANISMS(PM_CODE) NB_PM_COMPUTES(PM_CODE)};
#undef PM_CODE
constexpr bool pm_codes_distinct() {
  for (size_t i = 0; i < sizeof kPmCodes / sizeof kPmCodes[0]; i++)
    for (size_t j = 0; j < i; j++)
      if (kPmCodes[i] == kPmCodes[j]) return false;
  return true;
}
static_assert(pm_codes_distinct(), "two bytes-per-SM mechanisms or compute kernels share a code");

// pm_is_mech / pm_is_compute: code is a mechanism's / a compute kernel's.
static int pm_is_mech(int code) {
#define PM_IS(K) || code == K::code
  return false NB_PM_MECHANISMS(PM_IS);
}
static int pm_is_compute(int code) { return false NB_PM_COMPUTES(PM_IS); }
#undef PM_IS

// pm_on_sms: code is a mechanism on a budget of SMs (the others: no SM of ours).
static int pm_on_sms(int code) {
#define PM_SMS(M) || (code == M::code && M::sms)
  return false NB_PM_MECHANISMS(PM_SMS);
#undef PM_SMS
}

// pm_with_mech / pm_with_compute call f with the struct of code (PmNone for
// 0, where none is allowed), or fail for a code of neither list: never
// another kind's launch.
template <typename F>
static int pm_with_mech(int code, F f) {
#define PM_CASE(K) \
  if (code == K::code) return f(K{});
  NB_PM_MECHANISMS(PM_CASE)
  return fail(NB_ERR, "bytes per SM: %d is no transfer mechanism's code", code);
}
template <typename F>
static int pm_with_compute(int code, F f) {
  NB_PM_COMPUTES(PM_CASE)
  return fail(NB_ERR, "bytes per SM: %d is no compute kernel's code", code);
}
#undef PM_CASE
template <typename F>
static int pm_with_mech_or_none(int code, F f) { return code ? pm_with_mech(code, f) : f(PmNone{}); }
template <typename F>
static int pm_with_compute_or_none(int code, F f) { return code ? pm_with_compute(code, f) : f(PmNone{}); }

// A mechanism's entry traits: a payload, the load/store mapping it needs,
// and T_HOST where no SM of ours moves it (the Go side derives them the
// same way from the same facts: cuda/shim/persm.go).
template <typename M>
constexpr int pm_traits() {
  return T_PAYLOAD | (M::loadstore ? T_LOADSTORE : 0) | (M::sms ? 0 : T_HOST);
}

// pm_dst: where mechanism M writes the peer's bytes on this PE's launches
// (nullptr: no mapping; PmNone: none).
template <typename M>
static uint8_t *pm_dst(const Run *r) {
  if constexpr (std::is_same_v<M, PmNone>) return nullptr;
  else if constexpr (M::dst == PmDst::peer) return (uint8_t *)nvshmem_ptr(S.dst, r->target);
  else if constexpr (M::dst == PmDst::symmetric) return S.dst;  // NVSHMEM's put names the PE
  else if constexpr (M::dst == PmDst::lsa) return g_pm_lsa;
  else static_assert(unhandled_type<M>, "a destination pm_dst does not know");
}
