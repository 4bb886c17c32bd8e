// persm.cuh: bytes per SM (issue 32). Which transfer mechanism moves data
// with the fewest SMs, and what a transfer costs a compute kernel beside it.
// Included by nvshbench.cu after nccldev.cuh (whose NCCL windows the LSA
// mechanism uses).
//
// A point is a transfer on a budget of SMs: args.ctas CTAs of PM_THREADS
// threads, each holding PM_SMEM bytes of shared memory, more than half an
// SM's, so no two CTAs share an SM (one CTA is one SM of the budget). The
// mechanisms move args.size bytes from this PE's source into the peer's
// destination (the peer through nvshmem_ptr or an NCCL LSA pointer; this
// PE's own buffer on one PE), every iteration ending delivered (rma.cuh):
//   pm_st   16-byte SM stores (group_copy: four loads in flight a thread), a system fence
//   pm_tma  cp.async.bulk global -> shared (an mbarrier a stage) -> global (bulk groups),
//           one thread a CTA issuing; sm_90 has no global -> global bulk copy, so the
//           bytes pass through shared memory (PM_STAGES stages of PM_TILE bytes)
//   pm_put  nvshmemx_putmem_nbi_block + nvshmem_quiet
//   pm_lsa  16-byte SM stores through ncclGetLsaPointer into the peer's NCCL window
//   pm_ce   the copy engine (cudaMemcpyAsync): no SM of ours (args.ctas is not a budget); whether
//           the driver's copy needs one is checked, not assumed (pm_sm_check: on one H200 a
//           same-GPU copy waited for a free CTA slot)
//
// Interference: args.impl names the partner, by its operation code: a
// transfer beside a compute kernel (impl = NB_OP_PM_FMA / NB_OP_PM_MMA) or a
// compute kernel beside a transfer (rma.pm_fma / rma.pm_mma with impl = a
// mechanism's code; 0: alone). Both run in ONE fused launch of one CTA per
// SM with role-split CTAs: CTAs below args.ctas transfer, the others
// compute. Two kernels on two streams would not be sure to share the GPU
// (the first grid may take every SM before the second starts, or the
// second may wait for the first to end: the overlap would be the
// scheduler's choice, not the point's); a fused launch is co-resident by
// construction, and the launch is cooperative, so a grid that cannot be
// co-resident fails instead of deadlocking. The timed role does its
// iterations; the other runs in the background until the timed role's CTAs
// have all finished (a counter in device memory), so the events time the
// timed role with the other beside it all along.
//
// The copy engine is no kernel of ours, so it cannot be a role of the fused launch.
// Beside a compute kernel it runs on its own streams, the compute on every
// SM (pm_ce_timed, pm_ce_fed below):
//   persm/ce/beside-<compute>  the copies timed on S.stream as persm/ce's; the compute in the
//           background on a second stream, started by the family's arm hook before the first
//           event (it waits until every CTA runs), ended by a copy-engine write of the stop word
//           that the disarm hook enqueues after the end event, ordered after the copies: no SM
//           needed while every SM computes, and no call of ours between the copies and the event
//   persm/compute/<compute>/beside-ce  the compute on every SM timed as the alone row's (the
//           same kernel); the copies fed beside it by a host thread that arm starts (a
//           copy must have landed before the first event) and that keeps about
//           PM_FEED_AHEAD_MS of copies queued (k copies between two events, k and the depth
//           timed from the point's first copies) until the compute has ended; disarm waits
//           for it (or cancels it, the launch failed) and measures, from the copies' own
//           events, how busy the copy engine was in the timed window: a launch where it
//           idled is failed (pm_busy), unless a copy is shorter than the feeder's calls for
//           it (then no feeder could keep it busy: the point says so, not judged)
// Neither can be captured in a CUDA graph (a second stream, a host thread).
//
// Compute kernels, each with a result that depends on how much ran:
//   fma  every thread PM_ACC accumulators; an iteration is PM_FMA_STEPS steps of
//        acc = fma(acc, -1, 0) on each (a sign flip: back to acc after an even count)
//        and acc += 1: after n iterations acc = x0 + n, exactly
//   mma  every warp a 16x16 fp32 accumulator C; an iteration is PM_MMA_PAIRS pairs of
//        wmma bf16 16x16x16 C = A*B + C with A = ones and B = +ones then -ones (C + 16 - 16),
//        then C += 1: after n iterations C = x0 + n, exactly
// Every compute CTA records its n; the check reads n and the results.

#include <mma.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

enum {
  NB_OP_PM_ST = 100,   // SM 16-byte stores into the peer over a budget of SMs
  NB_OP_PM_TMA = 101,  // TMA bulk copies through shared memory into the peer
  NB_OP_PM_PUT = 102,  // nvshmemx_putmem_nbi_block + quiet
  NB_OP_PM_LSA = 103,  // SM stores through NCCL's LSA pointer into the peer's window
  NB_OP_PM_CE = 104,   // the copy engine: zero SMs
  NB_OP_PM_FMA = 105,  // the FMA-bound compute kernel on the SMs outside the budget
  NB_OP_PM_MMA = 106,  // the tensor-core bf16 compute kernel on the SMs outside the budget
};

#define PM_THREADS 512
#define PM_TILE (16 << 10)  // bytes of one TMA copy (one stage)
#define PM_STAGES 8
// 128 KiB of stages + the barriers + slack to align the stages
// (tma_aligned, common.cuh): one CTA an SM.
#define PM_SMEM (PM_STAGES * PM_TILE + 128 + TMA_ALIGN)
#define PM_SLICE (256 << 10)  // a background transfer looks at the stop word after each slice of its chunk
#define PM_ACC 8
#define PM_FMA_STEPS 256
#define PM_MMA_PAIRS 128
#define PM_OUT_OFF (16 << 10)  // scratch: [0, 8 KiB) n per CTA, [8 KiB] the done counter, results from 16 KiB
#define PM_STARTED_OFF (8192 + 8)  // scratch: the CTAs of a background compute that have started (beside the copy engine)
#define PM_BGSTAMPS_OFF (8192 + 32)  // scratch: that compute's launch stamps (not the harness's: nothing of ours is timed in it)
// A compute kernel beside the copy engine stops on its own after this long
// (and says so, failing the point): were the stop write never to come (the
// copies waiting for an SM), the launch would otherwise never end.
#define PM_BG_DEADLINE_NS 10000000000ull
// A launch of copies beside it must end well within that deadline: with a
// fixed --iters, pm_validate refuses one that would take over half of it
// at PM_CE_SLOW_BPS, a slow copy-engine path (a PCIe peer; the copy engine
// moves ~400 GB/s to an NVLink peer and ~2 TB/s on its own GPU, an H200's).
// A calibrated launch lasts about 20 ms.
#define PM_CE_SLOW_BPS 10e9

struct PmArgs {
  uint8_t *dst;
  const uint8_t *src;
  int64_t size;
  int iters, peer, budget;
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
// (NVSHBENCH_CUDA_ARCHS) compiles them out there, and pm_validate refuses
// TMA on such a GPU.
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
// store has landed (wait_group 0), visible to the generic proxy.
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

// pm_move: one CTA moves its len bytes with mechanism M, delivered.
template <int M>
__device__ static inline void pm_move(uint8_t *dst, const uint8_t *src, int64_t len, int peer, uint8_t *smem, uint32_t &phases) {
  if (len <= 0) return;  // the same for every thread of the CTA
  if constexpr (M == NB_OP_PM_ST || M == NB_OP_PM_LSA) {
    group_copy(dst, src, len, threadIdx.x, blockDim.x);
    __threadfence_system();
  } else if constexpr (M == NB_OP_PM_PUT) {
    nvshmemx_putmem_nbi_block(dst, src, len, peer);
    nvshmem_quiet();
  } else if constexpr (M == NB_OP_PM_TMA) {
    if (threadIdx.x == 0) {
      tma_copy(dst, src, len, smem, (uint64_t *)(smem + PM_STAGES * PM_TILE), phases);
      __threadfence_system();
    }
    __syncthreads();
  } else {
    static_assert(unhandled<M>, "a mechanism without a branch");
  }
}

// pm_stop: the background role's CTA asks whether the timed CTAs are done
// (thread 0 reads the count; every thread gets its answer).
__device__ static inline int pm_stop(const PmArgs &p) {
  return __syncthreads_or(threadIdx.x == 0 && *(volatile unsigned long long *)p.done >= p.want);
}

// pm_finished: a timed CTA tells the background it is done.
__device__ static inline void pm_finished(const PmArgs &p) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(p.done, 1ull);
  }
}

// pm_stop_ce: a compute CTA beside the copy engine asks whether the copies
// are done (the copy engine wrote the launch's number to done) or its
// deadline t_end (thread 0's) has passed, which it reports to the host.
__device__ static inline int pm_stop_ce(const PmArgs &p, uint64_t t_end) {
  int stop = 0;
  if (threadIdx.x == 0) {
    stop = *(volatile unsigned long long *)p.done >= p.want;
    if (!stop && gtimer() > t_end) {
      *(volatile unsigned long long *)(p.host + 1) = p.want;
      __threadfence_system();
      stop = 1;
    }
  }
  return __syncthreads_or(stop);
}

template <int M, int BACKGROUND, int PARTNER>
__device__ static void pm_transfer(const PmArgs &p, uint8_t *smem) {
  uint32_t phases = 0;
  if (M == NB_OP_PM_TMA) {
    uint64_t *bars = (uint64_t *)(smem + PM_STAGES * PM_TILE);
    if (threadIdx.x == 0) {
      for (int s = 0; s < PM_STAGES; s++) PM_ASM("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bars + s)) : "memory");
      PM_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
      (void)bars;  // compiled out below sm_90
    }
    __syncthreads();
  }
  int64_t off, len;
  chunk_of(p.size, p.budget, blockIdx.x, &off, &len);
  if constexpr (!BACKGROUND) {
    for (int it = 0; it < p.iters; it++) pm_move<M>(p.dst + off, p.src + off, len, p.peer, smem, phases);
    if (PARTNER) pm_finished(p);
  } else {
    for (int64_t o = 0;;) {  // passes over the chunk, a slice at a time, until the compute is done
      int64_t n = len - o < PM_SLICE ? len - o : PM_SLICE;
      pm_move<M>(p.dst + off + o, p.src + off + o, n, p.peer, smem, phases);
      o = o + n >= len ? 0 : o + n;
      if (pm_stop(p)) return;
    }
  }
}

__device__ static inline float pm_fma_x0(int64_t c, int j) { return 0.5f * (float)((c * PM_ACC + j) % 251); }
__device__ static inline float pm_mma_x0(int64_t w) { return (float)(w % 61); }

// pm_compute: compute CTA k (of gridDim.x - budget) runs iterations of kind
// C (CE: in the background of the copy engine, which stops it by a write).
template <int C, int BACKGROUND, int PARTNER, int CE = 0>
__device__ static void pm_compute(const PmArgs &p) {
  int64_t k = blockIdx.x - p.budget;
  uint64_t n = 0;
  auto loop = [&](auto iter) {
    if constexpr (!BACKGROUND) {
      for (int it = 0; it < p.iters; it++) iter();
      n = (uint64_t)p.iters;
      if (PARTNER) pm_finished(p);
    } else if constexpr (CE) {
      uint64_t t_end = gtimer() + PM_BG_DEADLINE_NS;
      do {
        iter();
        n++;
      } while (!pm_stop_ce(p, t_end));
    } else {
      do {
        iter();
        n++;
      } while (!pm_stop(p));
    }
  };
  if constexpr (C == NB_OP_PM_FMA) {
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
  } else if constexpr (C == NB_OP_PM_MMA) {
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
  } else {
    static_assert(unhandled<C>, "a compute kind without a branch");
  }
  if (threadIdx.x == 0) p.counts[blockIdx.x] = n;
}

// The fused launch: CTAs below the budget transfer with M (0: none), the
// others compute C (0: none); TIMED_COMPUTE says which role is timed (the
// other runs in the background while it does). M = NB_OP_PM_CE: no
// transfer role (budget 0, the copies are not ours): every CTA computes in
// the background until the copy engine's stop write, and the last CTA to
// start tells the host (pm_arm waits for it before the copies are timed).
template <int M, int C, int TIMED_COMPUTE>
__global__ void __launch_bounds__(PM_THREADS, 1) k_pm(PmArgs p) {
  // 16 bytes: all the relocatable build gives it (tma_aligned, common.cuh).
  extern __shared__ __align__(16) uint8_t pm_smem[];
  stamp_begin(p.st);
  if constexpr (M == NB_OP_PM_CE) {
    static_assert(C != 0 && !TIMED_COMPUTE, "beside the copy engine the compute runs in the background");
    if (threadIdx.x == 0 && atomicAdd(p.started, 1ull) == gridDim.x - 1ull) {
      *(volatile unsigned long long *)p.host = p.want;
      __threadfence_system();
    }
  }
  if ((int)blockIdx.x < p.budget) {
    if constexpr (M != 0 && M != NB_OP_PM_CE) pm_transfer<M, C != 0 && TIMED_COMPUTE, C != 0>(p, tma_aligned(pm_smem));
  } else {
    if constexpr (C != 0) pm_compute<C, M != 0 && !TIMED_COMPUTE, M != 0, M == NB_OP_PM_CE>(p);
  }
  stamp_end(p.st);
}

// Output bytes of the compute kernel beside a budget (a float per
// accumulator a thread; a 16 x 16 tile a warp).
static int64_t pm_out_floats(int op, int budget) {
  int64_t ctas = S.sms - budget;
  if (op == NB_OP_PM_FMA) return ctas * PM_THREADS * PM_ACC;
  return ctas * (PM_THREADS / 32) * 256;
}

__global__ void k_pm_check(const float *out, const uint64_t *counts, int64_t n, int budget, int fma, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t unit = fma ? i / PM_ACC : i / 256;  // the thread (fma) or warp (mma) that wrote it
    int64_t cta = budget + (fma ? unit / PM_THREADS : unit / (PM_THREADS / 32));
    uint64_t k = counts[cta];
    float want = (fma ? pm_fma_x0(unit, (int)(i % PM_ACC)) : pm_mma_x0(unit)) + (float)k;
    if (k == 0 || out[i] != want) mismatch(cnt, i);
  }
}

// ---------------------------------------------------------------------------
// Host side.

static int pm_is_transfer(int op) { return op >= NB_OP_PM_ST && op <= NB_OP_PM_CE; }
static int pm_is_compute(int op) { return op == NB_OP_PM_FMA || op == NB_OP_PM_MMA; }
// The point's transfer mechanism (0: none) and compute kind (0: none).
static int pm_mech(const Args *a) { return pm_is_transfer(a->op) ? a->op : a->impl; }
static int pm_comp(const Args *a) { return pm_is_compute(a->op) ? a->op : a->impl; }
// The transfer's data is checked where the transfer is timed (a background
// transfer stops mid-pass when the compute ends).
static int pm_checks_transfer(const Args *a) { return pm_is_transfer(a->op); }
// The transfer's SMs: args.ctas, none where the copy engine is the
// mechanism (its compute partner has every SM), and none for a compute
// kernel alone with args.ctas 0 (every SM: the copy engine's partner alone).
static int pm_budget(const Args *a) { return pm_mech(a) == NB_OP_PM_CE ? 0 : a->ctas; }
// The copy engine timed beside a compute kernel in the background
// (persm/ce/beside-<compute>), and a compute kernel timed beside copies a
// host thread feeds (persm/compute/<compute>/beside-ce).
static int pm_ce_timed(const Args *a) { return a->op == NB_OP_PM_CE && pm_is_compute(a->impl); }
static int pm_ce_fed(const Args *a) { return pm_is_compute(a->op) && a->impl == NB_OP_PM_CE; }

static uint64_t *pm_counts(void) { return (uint64_t *)S.scratch; }
static unsigned long long *pm_done(void) { return (unsigned long long *)(S.scratch + 8192); }
static unsigned long long *pm_started(void) { return (unsigned long long *)(S.scratch + PM_STARTED_OFF); }
static int64_t *pm_bgstamps(void) { return (int64_t *)(S.scratch + PM_BGSTAMPS_OFF); }
static float *pm_out(void) { return (float *)(S.scratch + PM_OUT_OFF); }

static uint8_t *g_pm_lsa;  // the peer's NCCL window, as this PE's kernels address it (pm_setup)

// --- the copy engine beside a compute kernel: the side streams, the words
// the kernels and the host share (mapped, pinned host memory: the host
// reads them without a CUDA call while the GPU is busy), the feeder thread.
// The feeder keeps PM_FEED_AHEAD_MS of copies queued: a host thread that
// shares its core with another (mpirun binds a rank to one core, where the
// harness's thread waits too) may be descheduled for a time slice, about a
// millisecond or a few (CFS's granularity), and the copy engine must not
// run dry meanwhile. It queues spans: k copies between a pre and a post
// event, k = ceil(PM_SPAN_MS / a copy's time) (1 to PM_SPAN_MAX), so that
// its calls a copy (a cudaMemcpyAsync, and two event records, a query and
// two elapsed-time reads a span) stay under a copy's time down to copies
// of a few microseconds; with one span a copy it could not keep up below
// ~8-16 MiB. A copy's time is the least of the point's first PM_FEED_MIN
// copies' own spans (one copy each, post - pre: the copy engine's time,
// whatever gaps the feeder left between them). The depth is PM_FEED_MIN to
// PM_FEED_MAX spans, and at most PM_FEED_COPIES copies (a stream's queue
// is finite: a call that blocked on it would count as the feeder's time).
#define PM_FEED_MIN 4
#define PM_FEED_MAX 512
#define PM_FEED_COPIES 512
#define PM_FEED_AHEAD_MS 2.0
#define PM_SPAN_MS 0.05
#define PM_SPAN_MAX 128
// A fed launch is failed where the copy engine was busy under PM_BUSY_MIN
// of its timed window (judged in windows of PM_BUSY_WINDOW_MS or longer:
// the events resolve about half a microsecond). An idle copy engine
// understates the compute's slowdown by about its idle share: at 90 %
// busy, a 5 % slowdown would read about 4.5 %. A launch under PM_BUSY_MIN
// whose copy took less than PM_FEED_HEADROOM times the CPU time its feeder
// spent in its CUDA calls a copy (clock_gettime's thread clock: not the
// time it was descheduled) is not judged: a feeder without that headroom
// falls behind at its first hiccup (on one H200, 1 KiB - 1 MiB copies of
// 7.2-8.5 us beside the mma loop against 5.3-7.8 us of calls were 86-90 %
// busy: results/h200-2026-12-01g call E); the point's values say so, with
// both times.
#define PM_BUSY_MIN 0.9
#define PM_BUSY_WINDOW_MS 1.0
#define PM_FEED_HEADROOM 2.0
// How long the host waits for side work (pm_arm: the background compute's
// CTAs, the first fed copies; pm_drain: a side stream to finish): longer
// than PM_BG_DEADLINE_NS, so a kernel that ran out its deadline says so
// first.
#define PM_ARM_TIMEOUT_S 15.0

struct PmSpan {
  float pre, post;  // ms after t0
  int k;            // copies between them
};

struct PmSide {
  int ready;
  int streams;        // bg and stop exist (pm_side_streams, nb_init's)
  cudaStream_t bg;    // the background compute's, or the fed copies' (non-blocking)
  cudaStream_t stop;  // the stop write's (non-blocking)
  cudaEvent_t ordered, copied, computed;  // computed follows the fed compute kernel (the feeder's stop)
  // Timing events: t0 opens a feeder's times, pre and post bracket each
  // copy it queued (a ring of slots).
  cudaEvent_t t0, pre[PM_FEED_MAX], post[PM_FEED_MAX];
  // [0] the launch whose CTAs have all started, [1] a launch whose compute
  // ran out its deadline, [4..8) the stop writes' values (a slot a launch).
  volatile unsigned long long *host;
  unsigned long long *host_dev;
  // The last launch armed. Never reset: a stop write that lands late
  // carries an older launch's number, smaller than the one now waited for.
  unsigned long long seq;
  int armed;  // a background compute runs that no stop write is enqueued for yet (pm_disarm enqueues it)
  std::thread *feeder;
  std::atomic<unsigned long long> computed_gen;  // the launch whose compute `computed` follows
  std::atomic<int> first;   // the feeder's first copy landed, the queue full (1), or it gave up (-1)
  std::atomic<int> hold;    // the timed launch is being enqueued: the feeder makes no call
  std::atomic<int> cancel;  // stop feeding
  std::atomic<int> feed_failed;
  std::atomic<int> feed_ended;  // the feeder has returned (pm_quiesce waits for it, at most PM_ARM_TIMEOUT_S)
  char feed_err[256];
  // The feeder's spans of the last launch, in ms after t0: [its pre, its
  // post] events around k copies, their time on the stream (back to back
  // while the queue holds work; a gap where it ran dry). Read after the
  // feeder ends. span_k: the copies of the span queued in each event slot.
  std::vector<PmSpan> spans;
  int span_k[PM_FEED_MAX];
  // At the point's size (0: not timed yet; the feeder's while it runs):
  // spans in flight, copies a span, a copy's time on the copy engine (ms).
  int depth, k;
  double t_copy;
  // The last launch's feeder: CPU seconds in its CUDA calls, copies queued.
  double feed_s;
  int64_t feed_n;
  // The point's fed launches so far (pm_busy; pm_end's values): those
  // judged (a window of PM_BUSY_WINDOW_MS or more), the least busy share
  // among them, the bytes the copies moved inside their windows and the
  // windows' ms; and those not judged because the feeder's calls took
  // longer than the copies (the most it spent a copy).
  int busy_n, busy_unfed;
  double busy_min, moved, window_ms, feed_max;
};
static PmSide g_pms;

// pm_side_streams: nb_init's, right after S.stream. The driver maps
// streams onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues round-robin, in
// the order they are created: bg created late (after NCCL's or a later
// family's streams) could share S.stream's queue, and the copies and the
// events on S.stream would wait behind the background compute that never
// ends before them (every point failing at its deadline). Created next to
// S.stream, bg has a queue of its own wherever there are two or more
// (pm_validate refuses these rows with one); stop may share S.stream's,
// where it waits for S.stream's work anyway.
static int pm_side_streams(void) {
  PmSide &g = g_pms;
  if (g.streams) return 0;
  CK(cudaStreamCreateWithFlags(&g.bg, cudaStreamNonBlocking));
  if (cudaError_t e = cudaStreamCreateWithFlags(&g.stop, cudaStreamNonBlocking); e != cudaSuccess) {
    cudaStreamDestroy(g.bg);
    return fail(NB_ERR, "cudaStreamCreateWithFlags (the copy engine's stop stream): %s", cudaGetErrorString(e));
  }
  g.streams = 1;
  return 0;
}

// pm_side_init: the events and the mapped host words, at the first point
// of the copy engine beside a compute kernel. Idempotent: what a failed
// call created stays (each handle non-null once made) for the next call
// to complete, and pm_side_free frees it.
// pm_mapped_words: n zeroed words of pinned host memory mapped into the
// device (host: the host's view, dev: the kernels'), made where *host is
// null (idempotent: a call that failed midway is completed by the next);
// pm_mapped_free frees them unless a kernel may still touch them (keep).
static int pm_mapped_words(int n, volatile unsigned long long **host, unsigned long long **dev) {
  if (!*host) {
    void *h = nullptr;
    CK(cudaHostAlloc(&h, n * sizeof(unsigned long long), cudaHostAllocMapped));
    memset(h, 0, n * sizeof(unsigned long long));
    *host = (volatile unsigned long long *)h;
  }
  if (!*dev) CK(cudaHostGetDevicePointer((void **)dev, (void *)const_cast<unsigned long long *>(*host), 0));
  return 0;
}
static void pm_mapped_free(volatile unsigned long long **host, unsigned long long **dev, bool keep) {
  if (*host && !keep) cudaFreeHost((void *)const_cast<unsigned long long *>(*host));
  *host = nullptr;
  *dev = nullptr;
}

static int pm_side_init(void) {
  PmSide &g = g_pms;
  if (g.ready) return 0;
  if (!g.streams) return fail(NB_ERR, "the copy engine's side streams were not created (nb_init)");
  if (!g.ordered) CK(cudaEventCreateWithFlags(&g.ordered, cudaEventDisableTiming));
  if (!g.copied) CK(cudaEventCreateWithFlags(&g.copied, cudaEventDisableTiming));
  if (!g.computed) CK(cudaEventCreateWithFlags(&g.computed, cudaEventDisableTiming));
  if (!g.t0) CK(cudaEventCreate(&g.t0));
  for (int i = 0; i < PM_FEED_MAX; i++) {
    if (!g.pre[i]) CK(cudaEventCreate(&g.pre[i]));
    if (!g.post[i]) CK(cudaEventCreate(&g.post[i]));
  }
  if (int st = pm_mapped_words(8, &g.host, &g.host_dev)) return st;
  g.ready = 1;
  return 0;
}

static double pm_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int pm_deadline_failure(void) {
  return fail(NB_ERR,
              "the compute kernel beside the copy engine stopped on its own after %llu s, the copy engine's stop write not "
              "come: the launch of copies beside it lasted that long (slower than pm_validate's %.0f GB/s allows), or the copies "
              "or the stop write waited for an SM",
              PM_BG_DEADLINE_NS / 1000000000ull, PM_CE_SLOW_BPS / 1e9);
}

// pm_stop_bg enqueues the copy-engine write that ends the armed background
// compute (an 8-byte copy from pinned host memory into the done word: no
// SM, so it runs while every SM computes): after what S.stream holds
// (after_copies: pm_disarm's, after the copies and the harness's end
// event), else at once (or where that order cannot be had). A stream of
// its own, enqueued after the end event: the harness's events time the
// copies alone, and no call of ours stands between them.
static int pm_stop_bg(int after_copies) {
  PmSide &g = g_pms;
  if (!g.armed) return 0;
  g.armed = 0;
  int slot = 4 + (int)(g.seq % 4);  // rewritten four launches later, long after its copy ran
  g.host[slot] = g.seq;
  int rc = 0;
  if (after_copies) {
    cudaError_t e = cudaEventRecord(g.copied, S.stream);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(g.stop, g.copied, 0);
    if (e != cudaSuccess) rc = fail(NB_ERR, "ordering the stop write after the copies: %s", cudaGetErrorString(e));
  }
  CK(cudaMemcpyAsync(pm_done(), (const void *)const_cast<unsigned long long *>(g.host + slot), sizeof(unsigned long long),
                     cudaMemcpyHostToDevice, g.stop));
  return rc;
}

// pm_drain waits for a side stream to finish, at most PM_ARM_TIMEOUT_S
// (polling: a stream that never finishes is reported, not waited on).
static int pm_drain(cudaStream_t st, const char *what) {
  for (double t0 = pm_now();; sched_yield()) {
    cudaError_t e = cudaStreamQuery(st);
    if (e == cudaSuccess) return 0;
    if (e != cudaErrorNotReady) return fail(NB_ERR, "%s: %s", what, cudaGetErrorString(e));
    if (pm_now() - t0 > PM_ARM_TIMEOUT_S) return fail(NB_ERR, "%s: still running after %.0f s", what, PM_ARM_TIMEOUT_S);
  }
}

// pm_quiesce ends what a launch or a point left on the side streams (a
// background compute gets its stop write if it has none, the feeder is
// joined, the streams drained) and returns the feeder's failure, if any:
// after every armed launch (pm_disarm), and as a safety net at the end of
// a point, before its buffers are prepared, checked or damaged, and at
// nb_finalize. cancel: the feeder stops at once (else it ends by itself
// once its launch's compute has ended: a launch that ran).
static int pm_quiesce(int cancel = 1) {
  PmSide &g = g_pms;
  if (!g.ready) return 0;
  int rc = pm_stop_bg(0);
  if (g.feeder) {
    // Uncancelled, the feeder ends once its compute has ended and its last
    // copies landed; one still running after PM_ARM_TIMEOUT_S is cancelled
    // (it polls, so it ends at once) and the launch fails.
    int late = 0;
    for (double t0 = pm_now(); !cancel && !g.feed_ended.load(); sched_yield())
      if (pm_now() - t0 > PM_ARM_TIMEOUT_S) {
        late = 1;
        break;
      }
    if (cancel || late) g.cancel.store(1);
    g.feeder->join();
    delete g.feeder;
    g.feeder = nullptr;
    if (late && !rc)
      rc = fail(NB_ERR, "the copies beside the compute kernel: the feeder did not end within %.0f s of the launch (its compute or copies not ended?)",
                PM_ARM_TIMEOUT_S);
  }
  int st = pm_drain(g.bg, "the side stream beside the timed launches");
  if (!rc) rc = st;
  st = pm_drain(g.stop, "the copy engine's stop write");
  if (!rc) rc = st;
  if (g.feed_failed.exchange(0) && !rc) rc = fail(NB_ERR, "the copies beside the compute kernel: %s", g.feed_err);
  return rc;
}

static int pm_validate(Run *r) {
  // rma's checks (roles, size, launch shape, the load/store mapping of st,
  // tma, lsa, ce), with a launch of at least one CTA: a compute kernel on
  // every SM has no transfer budget (args.ctas 0).
  const Args *a = r->a;
  Args shape = *a;
  if (pm_is_compute(shape.op) && shape.ctas == 0) shape.ctas = 1;
  r->a = &shape;
  int st = rma_validate(r);
  r->a = a;
  if (st) return st;
  int m = pm_mech(a), c = pm_comp(a);
  if (pm_is_transfer(a->op) && a->impl != 0 && !pm_is_compute(a->impl))
    return fail(NB_ERR, "a transfer's partner (args.impl %d) is a compute kernel: %d or %d", a->impl, NB_OP_PM_FMA, NB_OP_PM_MMA);
  if (pm_is_compute(a->op) && a->impl != 0 && !pm_is_transfer(a->impl))
    return fail(NB_ERR, "a compute kernel's partner (args.impl %d) is a transfer: %d..%d", a->impl, NB_OP_PM_ST, NB_OP_PM_CE);
  if (m == NB_OP_PM_CE && c && a->graph)
    return fail(NB_NOT_CAPTURABLE, "not capturable: a background kernel on a second stream (the copy engine beside a compute kernel)");
  if (m == NB_OP_PM_CE && c && a->bidir)
    return fail(NB_ERR,
                "the copy engine beside a compute kernel is one-way: bidirectional, both PEs would arm a cooperative compute kernel "
                "on every SM (and a feeder), each PE's copies landing in a GPU busy with the other's side work");
  if (const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS"); m == NB_OP_PM_CE && c && conn && atoi(conn) == 1)
    return fail(NB_UNREACHABLE,
                "CUDA_DEVICE_MAX_CONNECTIONS=1: every stream shares one hardware queue, so the copies (or the compute) timed on "
                "one stream would wait behind the other that runs beside them on a second stream, never overlapping them");
  double deadline_s = PM_BG_DEADLINE_NS * 1e-9;
  if (pm_ce_timed(a) && a->iters > 0 && (double)a->size * a->iters > PM_CE_SLOW_BPS * deadline_s / 2)
    return fail(NB_ERR,
                "%d copies of %lld bytes in one launch beside a compute kernel: at %.0f GB/s (a slow copy-engine path) they would "
                "take over %.0f s, half the compute's %.0f s deadline: fewer --iters (or none: calibrated to ~20 ms)",
                a->iters, (long long)a->size, PM_CE_SLOW_BPS / 1e9, deadline_s / 2, deadline_s);
  if (a->op == NB_OP_PM_CE && !c) return 0;  // the copy engine alone: rma's checks
  if (a->op != NB_OP_PM_CE && a->threads != PM_THREADS)
    return fail(NB_ERR, "bytes per SM: one CTA of %d threads an SM, not %d", PM_THREADS, a->threads);
  if (a->ctas > S.sms) return fail(NB_ERR, "a budget of %d SMs: this GPU has %d", a->ctas, S.sms);
  if (m && m != NB_OP_PM_CE && a->ctas < 1) return fail(NB_ERR, "a transfer of SMs needs a budget of at least one SM");
  int b = pm_budget(a);
  if (c && b >= S.sms) return fail(NB_ERR, "a compute kernel beside %d transfer SMs needs one of this GPU's %d left", b, S.sms);
  if (c && PM_OUT_OFF + pm_out_floats(c, b) * 4 > S.buf)
    return fail(NB_ERR, "the compute kernel's results need %lld bytes of scratch", (long long)(PM_OUT_OFF + pm_out_floats(c, b) * 4));
  if (m == NB_OP_PM_TMA && a->size % 16) return fail(NB_ERR, "TMA moves multiples of 16 bytes: size %lld is not one", (long long)a->size);
  if (m == NB_OP_PM_TMA) {
    int cc = 0;
    CK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, S.device));
    if (cc < 9) return fail(NB_UNREACHABLE, "TMA (cp.async.bulk) needs compute capability 9.0 or later; this GPU has %d.x", cc);
  }
  if (r->initiator && m && m != NB_OP_PM_PUT && nvshmem_ptr(S.dst, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d (no P2P mapping)", r->target, S.me);
  if (m == NB_OP_PM_LSA) {
    if ((st = nd_headers())) return st;
    return nd_state();
  }
  return 0;
}

// pm_kernel_ready: an instantiation of k_pm allowed its shared memory and
// its module loaded (cudaFuncGetAttributes loads it under lazy loading),
// once. The launches call it; pm_prepare calls it for the copy engine's
// rows, where the first launch's would otherwise stand inside a judged
// window: the compute's launch between ev0 and its kernel, while the
// feeder's 2 ms of copies drain (its busy share, pm_busy, judged on every
// launch), the background compute's while the copies wait to be timed.
template <int M, int C, int TIMED_COMPUTE>
static int pm_kernel_ready(void) {
  static bool ready = false;
  if (ready) return 0;
  auto k = k_pm<M, C, TIMED_COMPUTE>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, PM_SMEM));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, (const void *)k));
  ready = true;
  return 0;
}

template <int C>
static int pm_ce_kernels_ready(void) {
  if (int st = pm_kernel_ready<0, C, 1>()) return st;  // the compute fed copies beside it
  return pm_kernel_ready<NB_OP_PM_CE, C, 0>();         // the compute behind the timed copies
}

static int pm_prepare(Run *r) {
  (void)pm_quiesce();  // an earlier point's side work (its failure was that point's)
  int st = rma_prepare(r);  // this PE's pattern in its source, its destination poisoned
  if (st || !pm_comp(r->a)) return st;
  if (pm_mech(r->a) == NB_OP_PM_CE) {
    if ((st = pm_side_init())) return st;
    if ((st = pm_comp(r->a) == NB_OP_PM_FMA ? pm_ce_kernels_ready<NB_OP_PM_FMA>() : pm_ce_kernels_ready<NB_OP_PM_MMA>())) return st;
    PmSide &g = g_pms;
    g.host[1] = 0;
    g.depth = g.k = 0;  // timed again at this point's size
    g.t_copy = 0;
    g.busy_n = g.busy_unfed = 0;
    g.busy_min = g.moved = g.window_ms = g.feed_max = 0;
  }
  k_zero_u64<<<8, 256, 0, S.stream>>>(pm_counts(), NB_MAX_CTAS + 1);  // and the done word
  CKLAUNCH("count reset");
  k_fill_words<uint32_t><<<256, 256, 0, S.stream>>>((uint32_t *)pm_out(), pm_out_floats(pm_comp(r->a), pm_budget(r->a)), 0xFFFFFFFFu);  // NaN
  CKLAUNCH("result poison");
  return 0;
}

// --- Does a copy-engine row's copy need an SM? The rows above assume the
// copy engine's copies use none, and on one H200 (driver 580.159.04, CUDA
// 13.0; results/h200-2026-12-01g) a same-GPU device-to-device
// cudaMemcpyAsync did not: beside a kernel holding every CTA slot (32 CTAs
// of 32 sleeping threads an SM) or every thread slot its copies made no
// progress until that kernel exited, beside one holding all shared memory
// but few threads they ran at full rate, and beside an FMA kernel their
// rate fell with its warps an SM: the driver ran them as a kernel. To a
// peer over NVLink it may use a copy engine: so each process asks, once
// for each target it copies to (pm_sm_check, in the family's setup: before
// the point's calibration and warm-up, outside any timed window), and
// every copy-engine point says what it found (pm_end: the value
// ce_sm_free, 1 or 0, where it could judge):
//   k_pm_hold on the side stream bg, as many CTAs of PM_HOLD_THREADS (no
//   shared memory) as the occupancy API says fit on every SM, each
//   spinning (__nanosleep) until the host releases it; once every CTA has
//   started (all co-resident: none ends before the release) one copy, the
//   rows' call (cudaMemcpyAsync from this PE's source into the target's
//   destination, device to device, min(size, 1 MiB) bytes) on S.stream;
//   free: its event completed within PM_HOLD_COPY_S while every CTA slot
//   was held (the same copy ran once before, nothing held, so that what a
//   first copy sets up is not what the held one waits for). Not judged where the holder's CTAs did not all start within
//   PM_HOLD_START_S (something else holds SMs: another process on the
//   GPU), where they ran out their deadline, or under
//   CUDA_DEVICE_MAX_CONNECTIONS=1 (S.stream and bg share one hardware
//   queue: the copy would wait behind the holder whatever it needs). The
//   holder ends by itself PM_HOLD_DEADLINE_NS after its first CTA started,
//   and every path of the host releases it before it returns; the host's
//   waits are bounded (pm_drain's). The fed compute's copies go on bg
//   (the holder's stream here): the check's copy is the same call on
//   S.stream, and its answer is the target's, whichever row asked first.
#define PM_HOLD_THREADS 32
#define PM_HOLD_DEADLINE_NS 2000000000ull
#define PM_HOLD_START_S 1.0
#define PM_HOLD_COPY_S 0.05
#define PM_HOLD_COPY_MAX (1 << 20)

// k_pm_hold: d[0] counts the CTAs started, d[1] is the deadline (the first
// CTA's %globaltimer + PM_HOLD_DEADLINE_NS: a CTA that starts after it
// ends at once), d[2] the release relayed from the host's word (mapped
// host memory, read over PCIe: CTA 0 reads it at every poll, the others at
// their first and every 256th (were CTA 0 not running), and the first to
// see it stores it where every CTA polls, every 10-20 us).
// host: [0] the check whose CTAs have all started (the last CTA's write),
// [1] its release (the host's), [2] a check whose holder ran out its
// deadline. One thread a CTA spins; the CTA holds its slot while it does.
__global__ void k_pm_hold(unsigned long long *d, volatile unsigned long long *host, unsigned long long seq) {
  if (threadIdx.x != 0) return;
  unsigned long long now = gtimer(), t_end = atomicCAS(d + 1, 0ull, now + PM_HOLD_DEADLINE_NS);
  if (t_end == 0) t_end = now + PM_HOLD_DEADLINE_NS;
  if (atomicAdd(d, 1ull) == gridDim.x - 1ull) {
    host[0] = seq;
    __threadfence_system();
  }
  volatile unsigned long long *rel = d + 2;
  for (unsigned i = 0;; i++) {
    if (*rel == seq) return;
    if ((blockIdx.x == 0 || i % 256 == 0) && host[1] == seq) {
      *rel = seq;
      return;
    }
    if (gtimer() > t_end) {
      host[2] = seq;
      __threadfence_system();
      return;
    }
    __nanosleep(10000);
  }
}

enum { PM_SM_FREE = 1, PM_SM_WAITED, PM_SM_UNJUDGED };
#define PM_SM_ANSWERS 256

struct PmSmCheck {
  int ready;
  int busy;  // a drain ran out of time: the holder may still read its words (not freed)
  unsigned long long *dev;            // k_pm_hold's d
  volatile unsigned long long *host;  // its host words (mapped, pinned)
  unsigned long long *host_dev;
  cudaEvent_t copied, before;  // before: recorded ahead of the held copy (its stream's own progress)
  unsigned long long seq;
  // For each target PE and copy size (the point's, at most PM_HOLD_COPY_MAX:
  // the driver may pick a kernel or a copy engine by size): its answer.
  // Cleared at finalize.
  struct Answer {
    int target;
    int64_t bytes;
    int answer;
  } ans[PM_SM_ANSWERS];
  int n_ans;
};
static PmSmCheck g_pmc;

// pm_sm_bytes: the size of the check's copy for a point.
static int64_t pm_sm_bytes(const Args *a) { return a->size < PM_HOLD_COPY_MAX ? a->size : PM_HOLD_COPY_MAX; }

// pm_sm_answer: the check's entry for (target, bytes), nullptr where none
// (add: made, where the table has room).
static PmSmCheck::Answer *pm_sm_answer(int t, int64_t bytes, bool add) {
  PmSmCheck &c = g_pmc;
  for (int i = 0; i < c.n_ans; i++)
    if (c.ans[i].target == t && c.ans[i].bytes == bytes) return &c.ans[i];
  if (!add || c.n_ans >= PM_SM_ANSWERS) return nullptr;
  PmSmCheck::Answer *e = &c.ans[c.n_ans++];
  *e = PmSmCheck::Answer{t, bytes, 0};
  return e;
}

// Idempotent, as pm_side_init: what a failed call made stays for the next.
static int pm_sm_init(void) {
  PmSmCheck &c = g_pmc;
  if (c.ready) return 0;
  if (!c.dev) CK(cudaMalloc((void **)&c.dev, 4 * sizeof *c.dev));
  if (!c.copied) CK(cudaEventCreateWithFlags(&c.copied, cudaEventDisableTiming));
  if (!c.before) CK(cudaEventCreateWithFlags(&c.before, cudaEventDisableTiming));
  if (int st = pm_mapped_words(4, &c.host, &c.host_dev)) return st;
  c.ready = 1;
  return 0;
}

// pm_sm_check: the check above for r's target and copy size, once a
// process (the answer is cached, a failure's too: "not judged", the point
// that met it failed).
// The check's copy lands the initiator's pattern in the target's
// destination, which the target poisoned before agreement 1: its bytes
// are poisoned again (as rma_prepare does, where the point is verified),
// so the point's check still proves its own copies.
static int pm_sm_check(Run *r) {
  PmSmCheck &c = g_pmc;
  int t = r->target;
  int64_t n = pm_sm_bytes(r->a);
  if (t < 0 || t >= NB_MAX_PES || pm_sm_answer(t, n, false)) return 0;
  PmSmCheck::Answer *e = pm_sm_answer(t, n, true);
  if (!e) return 0;  // PM_SM_ANSWERS sizes checked already: the point says nothing
  e->answer = PM_SM_UNJUDGED;  // until answered (a CUDA error leaves it so)
  if (const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS"); conn && atoi(conn) == 1) return 0;
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, t);
  if (!rd) return 0;  // no P2P mapping: pm_validate refuses such a point first
  if (!g_pms.streams) return fail(NB_ERR, "the copy engine SM check: the side streams were not created (nb_init)");
  if (int st = pm_sm_init()) return st;
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_pm_hold, PM_HOLD_THREADS, 0));
  int grid = per * S.sms;
  if (grid < 1) return fail(NB_ERR, "the copy engine SM check: the occupancy API fits no CTA of %d threads on an SM", PM_HOLD_THREADS);
  // The same copy first with nothing held, waited for: whatever the first
  // copy of the process sets up (a module, a mapping) is done before the
  // held one is given PM_HOLD_COPY_S.
  CK(cudaMemcpyAsync(rd, S.src, n, cudaMemcpyDeviceToDevice, S.stream));
  if (int st = pm_drain(S.stream, "the copy engine SM check's first copy")) return st;
  unsigned long long seq = ++c.seq;
  CK(cudaMemsetAsync(c.dev, 0, 3 * sizeof *c.dev, g_pms.bg));
  // The launch's own error below, nothing older: an error a call elsewhere
  // returned and its caller handled (cudaDeviceEnablePeerAccess's "already
  // enabled", an occupancy query) may still be latched; not this check's.
  (void)cudaGetLastError();
  k_pm_hold<<<grid, PM_HOLD_THREADS, 0, g_pms.bg>>>(c.dev, c.host_dev, seq);
  // From here the holder may run: every path releases it before returning.
  int started = 0, copied = 0, moved = 0;
  cudaError_t err = cudaGetLastError();
  for (double t0 = pm_now(); err == cudaSuccess; sched_yield()) {
    if (c.host[0] == seq) {
      started = 1;
      break;
    }
    cudaError_t q = cudaStreamQuery(g_pms.bg);
    if (q != cudaErrorNotReady) {  // it ended (or failed) before its CTAs had all started
      if (q != cudaSuccess) err = q;
      break;
    }
    if (pm_now() - t0 > PM_HOLD_START_S) break;
  }
  if (started) {
    // before: the stream's own progress, so a copy that waited is told
    // from a stream held up by something else (then: not judged).
    err = cudaEventRecord(c.before, S.stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(rd, S.src, n, cudaMemcpyDeviceToDevice, S.stream);
    if (err == cudaSuccess) err = cudaEventRecord(c.copied, S.stream);
    for (double t0 = pm_now(); err == cudaSuccess; sched_yield()) {
      cudaError_t q = cudaEventQuery(c.copied);
      if (q == cudaSuccess) {
        copied = moved = 1;
        break;
      }
      if (q != cudaErrorNotReady) err = q;
      else if (pm_now() - t0 > PM_HOLD_COPY_S) {
        cudaError_t b = cudaEventQuery(c.before);
        if (b == cudaSuccess) moved = 1;
        else if (b != cudaErrorNotReady) err = b;
        break;
      }
    }
  }
  c.host[1] = seq;  // the release
  int held = pm_drain(g_pms.bg, "the kernel holding every CTA slot (the copy engine SM check)");
  int landed = pm_drain(S.stream, "the copy engine SM check's copy");
  if (held || landed) c.busy = 1;
  if (err != cudaSuccess) return fail(NB_ERR, "the copy engine SM check: %s", cudaGetErrorString(err));
  if (held || landed) return held ? held : landed;
  if (r->a->verify) {  // both copies landed in the target's destination
    if (int st = poison(rd, n, "the copy engine SM check's poison")) return st;
    CK(cudaStreamSynchronize(S.stream));
  }
  // Not judged: its holder's deadline passed; not all its CTAs ran at once
  // within PM_HOLD_START_S (another process's kernels on the GPU?); or the
  // stream had not reached the copy (its wait says nothing).
  if (c.host[2] == seq || !started || !moved) return 0;
  e->answer = copied ? PM_SM_FREE : PM_SM_WAITED;
  return 0;
}

// pm_sm_value: the check's answer for r's target as the point's value
// ce_sm_free: 1 a copy ran while every CTA slot was held, 0 it waited for
// one; none where the check could not judge.
static int pm_sm_value(Run *r, nb_result *res) {
  int t = r->target;
  const PmSmCheck::Answer *e = t < 0 || t >= NB_MAX_PES ? nullptr : pm_sm_answer(t, pm_sm_bytes(r->a), false);
  if (!e || (e->answer != PM_SM_FREE && e->answer != PM_SM_WAITED)) return 0;
  return put_value(res, "ce_sm_free", "1", e->answer == PM_SM_FREE ? 1 : 0);
}

// pm_sm_free: nb_finalize's (pm_side_free's); the words stay where a
// holder may still read them.
static void pm_sm_free(void) {
  PmSmCheck &c = g_pmc;
  c.ready = 0;
  c.n_ans = 0;  // a process initialised again checks again
  if (c.copied) cudaEventDestroy(c.copied);
  if (c.before) cudaEventDestroy(c.before);
  c.copied = c.before = nullptr;
  if (c.busy) return;
  if (c.dev) cudaFree(c.dev);
  c.dev = nullptr;
  pm_mapped_free(&c.host, &c.host_dev, false);
}

#if NB_NCCL_DEVICE
__global__ void k_pm_lsa_ptr(ncclWindow_t w, int lsa_peer, uint8_t **out) { *out = (uint8_t *)ncclGetLsaPointer(w, 0, lsa_peer); }
#endif

// The LSA mechanism's windows (collective: every PE), and the peer's
// window as a plain address, resolved once a point (the kernels then store
// through it as pm_st does through nvshmem_ptr's). The copy engine's rows:
// whether their copies need an SM, on an initiator, once a process for each
// target (after agreement 1: the target's destination is poisoned, which
// the check's copy lands in and poisons again).
static int pm_setup(Run *r) {
  if (pm_mech(r->a) == NB_OP_PM_CE) return r->initiator ? pm_sm_check(r) : 0;
  if (pm_mech(r->a) != NB_OP_PM_LSA) return 0;
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

static int64_t pm_bytes(Run *r) { return r->initiator && pm_is_transfer(r->a->op) ? r->a->size : 0; }
static int64_t pm_work_set(Run *r) {
  return pm_is_transfer(r->a->op) ? r->a->size : pm_out_floats(r->a->op, pm_budget(r->a)) * 4;
}

static int pm_arm(Run *r);
static int pm_disarm(Run *r, int ok);
static int pm_end(Run *r, nb_result *res);
static const Family kPM = {"persm", pm_validate, rma_active, rma_synced, 1, 0, 0, pm_prepare, pm_setup, nullptr, pm_bytes, pm_work_set,
                           nullptr, pm_arm, pm_disarm, pm_end};

// --- the checks: the transfer's pattern at its target (a timed transfer),
// the compute kernel's results on the initiator (wherever one ran).
static Region pm_at_transfer(Run *r) {
  if (!pm_checks_transfer(r->a)) return nowhere();
#if NB_NCCL_DEVICE
  if (r->a->op == NB_OP_PM_LSA) return at_window_target(r);
#endif
  return at_put_target(r);
}
static Region pm_at_compute(Run *r) {
  int c = pm_comp(r->a);
  return c && r->initiator ? region(pm_out(), pm_out_floats(c, pm_budget(r->a)), 4) : nowhere();
}

static int pm_check(Run *r, nb_result *res) {
  // The side streams first: a background compute writes its counts and
  // results when it ends.
  int side = pm_quiesce();
  if (!side && pm_ce_timed(r->a) && g_pms.ready && g_pms.host[1]) side = pm_deadline_failure();
  Region w = pm_at_transfer(r);
  if (w.p)
    if (int rc = put_pattern(r, w, res)) return rc;
  Region c = pm_at_compute(r);
  if (!c.p) return side;
  int budget = pm_budget(r->a), fma = pm_comp(r->a) == NB_OP_PM_FMA;
  int rc = counted(
      c.n, res, [&](unsigned long long *cnt) { k_pm_check<<<256, 256, 0, S.stream>>>((const float *)c.p, pm_counts(), c.n, budget, fma, cnt); },
      [&](unsigned long long first, unsigned long long) {
        float got = 0;
        cudaMemcpy(&got, (const float *)c.p + first, sizeof got, cudaMemcpyDeviceToHost);
        snprintf(res->detail, sizeof res->detail, "compute result %llu: got %g, want its start value + its CTA's iterations", first, got);
      });
  return rc ? rc : side;
}

// The compute's results where a compute ran (the transfer's check is the
// same as the alone rows', whose corruption proves it), else the transfer's.
static int pm_corrupt(Run *r) {
  if (int rc = pm_quiesce()) return rc;  // a background compute would write its results over the damage
  Region c = pm_at_compute(r);
  if (c.p) return corrupt_region(c);
  Region w = pm_at_transfer(r);
  return w.p ? corrupt_region(w) : 0;
}

static constexpr Check kCheckPm = {"the initiator's pattern at the target (a timed transfer); every compute result at its start value + its CTA's iterations",
                                   pm_check, pm_corrupt};

// --- launches
template <int M, int C, int TIMED_COMPUTE>
static int pm_launch_kernel(Run *r, int iters, uint8_t *dst) {
  const Args *a = r->a;
  auto k = k_pm<M, C, TIMED_COMPUTE>;
  if (int st = pm_kernel_ready<M, C, TIMED_COMPUTE>()) return st;
  int budget = pm_budget(a);
  int grid = C ? S.sms : budget;
  launched(r, k, grid, PM_THREADS, PM_SMEM);
  PmArgs p;
  p.dst = dst;
  p.src = S.src;
  p.size = a->size;
  p.iters = iters;
  p.peer = r->target;
  p.budget = budget;
  p.want = (unsigned long long)(TIMED_COMPUTE ? grid - budget : budget);
  p.done = pm_done();
  p.counts = pm_counts();
  p.out = pm_out();
  p.minus1 = -1.0f;
  p.one = 1.0f;
  p.st = S.times;
  p.started = nullptr;
  p.host = nullptr;
  if (M && C) {  // both roles: co-resident or refused
    CK(cudaMemsetAsync(p.done, 0, sizeof *p.done, S.stream));
    void *args[] = {&p};
    CK(cudaLaunchCooperativeKernel((const void *)k, dim3(grid), dim3(PM_THREADS), args, PM_SMEM, S.stream));
  } else {
    k<<<grid, PM_THREADS, PM_SMEM, S.stream>>>(p);
    CKLAUNCH("bytes-per-SM kernel");
  }
  return 0;
}

// with_pm calls f with the compile-time code of a mechanism or compute kind
// (0: none; the copy engine is no kernel's).
template <typename F>
static int with_pm(int code, F f) {
  switch (code) {
  case NB_OP_PM_ST: return f(std::integral_constant<int, NB_OP_PM_ST>{});
  case NB_OP_PM_TMA: return f(std::integral_constant<int, NB_OP_PM_TMA>{});
  case NB_OP_PM_PUT: return f(std::integral_constant<int, NB_OP_PM_PUT>{});
  case NB_OP_PM_LSA: return f(std::integral_constant<int, NB_OP_PM_LSA>{});
  case NB_OP_PM_FMA: return f(std::integral_constant<int, NB_OP_PM_FMA>{});
  case NB_OP_PM_MMA: return f(std::integral_constant<int, NB_OP_PM_MMA>{});
  }
  return f(std::integral_constant<int, 0>{});
}

// pm_launch_bg launches compute kernel C on every SM in the background of
// the copy engine: a cooperative launch (co-resident or refused) on the
// side stream, its CTAs polling the done word for the launch's number.
template <int C>
static int pm_launch_bg(Run *r, unsigned long long seq) {
  auto k = k_pm<NB_OP_PM_CE, C, 0>;
  if (int st = pm_kernel_ready<NB_OP_PM_CE, C, 0>()) return st;
  PmArgs p;
  p.dst = nullptr;
  p.src = nullptr;
  p.size = r->a->size;
  p.iters = 0;
  p.peer = r->target;
  p.budget = 0;
  p.want = seq;
  p.done = pm_done();
  p.counts = pm_counts();
  p.out = pm_out();
  p.minus1 = -1.0f;
  p.one = 1.0f;
  p.st = pm_bgstamps();  // not the harness's stamps: the copies are what is timed
  p.started = pm_started();
  p.host = g_pms.host_dev;
  void *args[] = {&p};
  CK(cudaLaunchCooperativeKernel((const void *)k, dim3(S.sms), dim3(PM_THREADS), args, PM_SMEM, g_pms.bg));
  return 0;
}

// pm_arm_compute: the copy engine's compute partner must run on every SM
// before the first event (launched inside the timed launch, it would start
// after the events did, and the window would time copies alone): launched
// on the side stream after what the harness put on S.stream so far (from
// here to the stop write nothing may wait for an SM), then waited for
// until its last CTA has started.
static int pm_arm_compute(Run *r) {
  PmSide &g = g_pms;
  if (!g.ready) return fail(NB_ERR, "the copy engine beside a compute kernel: its side streams were not prepared");
  if (g.host[1]) return pm_deadline_failure();  // an earlier launch of the point
  CK(cudaEventRecord(g.ordered, S.stream));
  CK(cudaStreamWaitEvent(g.bg, g.ordered, 0));
  CK(cudaMemsetAsync(pm_started(), 0, sizeof(unsigned long long), g.bg));
  unsigned long long seq = ++g.seq;
  int st = with_pm(r->a->impl, [&](auto cc) -> int {
    constexpr int C = decltype(cc)::value;
    if constexpr (C == NB_OP_PM_FMA || C == NB_OP_PM_MMA) return pm_launch_bg<C>(r, seq);
    else return fail(NB_ERR, "the copy engine's partner (args.impl %d) is not a compute kernel", r->a->impl);
  });
  if (st) return st;
  g.armed = 1;
  for (double t0 = pm_now(); g.host[0] != seq; sched_yield()) {
    if (g.host[1]) {
      pm_stop_bg(0);
      return pm_deadline_failure();
    }
    // The kernel failed, or ended without saying that all its CTAs ran.
    cudaError_t q = cudaStreamQuery(g.bg);
    if (q != cudaErrorNotReady && g.host[0] != seq) {
      pm_stop_bg(0);
      if (g.host[1]) return pm_deadline_failure();
      if (q == cudaSuccess) return fail(NB_ERR, "the compute kernel beside the copy engine ended before its %d CTAs had all started", S.sms);
      return fail(NB_ERR, "the compute kernel beside the copy engine: %s", cudaGetErrorString(q));
    }
    if (pm_now() - t0 > PM_ARM_TIMEOUT_S) {
      pm_stop_bg(0);  // it ends at once wherever it starts later
      return fail(NB_ERR, "the compute kernel beside the copy engine: its %d CTAs had not all started after %.0f s", S.sms, PM_ARM_TIMEOUT_S);
    }
  }
  return 0;
}

// pm_feed_depth: from the first PM_FEED_MIN spans (one copy each), a
// copy's time on the copy engine (the least of their post - pre: each the
// copy alone, whatever gap the feeder left before it), the copies a span
// (PM_SPAN_MS of copying) and the spans to keep in flight for
// PM_FEED_AHEAD_MS of copying (at most PM_FEED_COPIES copies).
static void pm_feed_depth(PmSide &g) {
  double t = g.spans[0].post - g.spans[0].pre;
  for (int i = 1; i < PM_FEED_MIN; i++) t = fmin(t, (double)g.spans[i].post - g.spans[i].pre);
  t = fmax(t, 0.0);
  double k = t > 0 ? ceil(PM_SPAN_MS / t) : PM_SPAN_MAX;
  g.k = k >= PM_SPAN_MAX ? PM_SPAN_MAX : (k <= 1 ? 1 : (int)k);
  int most = PM_FEED_COPIES / g.k < PM_FEED_MIN ? PM_FEED_MIN : PM_FEED_COPIES / g.k;
  double d = t > 0 ? PM_FEED_AHEAD_MS / (t * g.k) : most;
  g.depth = d >= most ? most : (d <= PM_FEED_MIN ? PM_FEED_MIN : (int)ceil(d));
  g.t_copy = t;
}

static double pm_cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// pm_feed: the feeder thread. It copies the point's buffer into the peer's
// (persm/ce's copy) on the side stream, in spans of g.k copies between a
// pre and a post event, g.depth spans in flight (the first launch of a
// point times its first PM_FEED_MIN copies, a span each, to set them),
// until the compute of launch gen has ended; then it waits for its last
// copies (their spans reach past the window's end) and returns. It says
// when its first copy landed, the queue full (first), and makes no call
// from then until the timed launch has been enqueued (hold). It only
// polls (cudaEventQuery), so a cancel ends it at once. It counts the CPU
// time of its calls to queue and read spans, and the copies (feed_s,
// feed_n: pm_busy's).
static void pm_feed(uint8_t *dst, const uint8_t *src, int64_t size, unsigned long long gen) {
  PmSide &g = g_pms;
  const char *what = nullptr;
  cudaError_t e = cudaSetDevice(S.device);  // the current device is per thread
  if (e != cudaSuccess) what = "cudaSetDevice";
  else if ((e = cudaEventRecord(g.t0, g.bg)) != cudaSuccess) what = "cudaEventRecord beside the compute kernel";
  int64_t n = 0, c = 0;  // spans queued; spans landed, read
  int stopping = 0;
  while (!what && !g.cancel.load()) {
    int depth = g.depth ? g.depth : PM_FEED_MIN, k = g.depth ? g.k : 1;
    for (; !stopping && n - c < depth; n++) {
      int s = (int)(n % PM_FEED_MAX);
      double t0 = pm_cpu_now();
      e = cudaEventRecord(g.pre[s], g.bg);
      for (int i = 0; i < k && e == cudaSuccess; i++) e = cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, g.bg);
      if (e == cudaSuccess) e = cudaEventRecord(g.post[s], g.bg);
      if (e != cudaSuccess) {
        what = "a copy beside the compute kernel";
        break;
      }
      g.feed_s += pm_cpu_now() - t0;
      g.feed_n += k;
      g.span_k[s] = k;
    }
    if (what) break;
    if (g.depth && c > 0 && g.first.load() == 0) {  // a copy landed, the queue full: the window may open
      g.first.store(1);
      while (g.hold.load() && !g.cancel.load()) sched_yield();
      continue;
    }
    if (!stopping && g.computed_gen.load() == gen && cudaEventQuery(g.computed) == cudaSuccess) stopping = 1;  // the compute has ended
    if (c == n) break;  // stopping, and every copy landed
    int s = (int)(c % PM_FEED_MAX);
    while ((e = cudaEventQuery(g.post[s])) == cudaErrorNotReady && !g.cancel.load()) sched_yield();
    if (e == cudaErrorNotReady) break;  // cancelled
    double t0 = pm_cpu_now();
    float a = 0, b = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&a, g.t0, g.pre[s]);
    if (e == cudaSuccess) e = cudaEventElapsedTime(&b, g.t0, g.post[s]);
    if (e != cudaSuccess) {
      what = "a copy beside the compute kernel";
      break;
    }
    try {
      g.spans.push_back(PmSpan{a, b, g.span_k[s]});
    } catch (...) {
      snprintf(g.feed_err, sizeof g.feed_err, "no host memory for the copies' times");
      g.feed_failed.store(1);
      break;
    }
    g.feed_s += pm_cpu_now() - t0;
    if (++c == PM_FEED_MIN && !g.depth) pm_feed_depth(g);
  }
  if (what) {
    snprintf(g.feed_err, sizeof g.feed_err, "%s: %s", what, cudaGetErrorString(e));
    g.feed_failed.store(1);
  }
  if (g.first.load() == 0) g.first.store(-1);
  g.feed_ended.store(1);
}

// pm_arm_feeder: the copies must be running before the first event: the
// feeder starts and arm waits for its first copy to land and the queue to
// be full (the first launch of a point also times the depth); the feeder
// holds further calls until the compute is enqueued (pm_launch_fed).
static int pm_arm_feeder(Run *r) {
  PmSide &g = g_pms;
  if (!g.ready) return fail(NB_ERR, "a compute kernel beside the copy engine: its side streams were not prepared");
  if (int st = pm_quiesce()) return st;  // the last launch's feeder (its compute has ended)
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  if (!rd) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  unsigned long long gen = ++g.seq;
  g.first.store(0);
  g.hold.store(1);
  g.cancel.store(0);
  g.feed_ended.store(0);
  g.spans.clear();
  g.feed_s = 0;
  g.feed_n = 0;
  try {
    g.spans.reserve(4096);
    g.feeder = new std::thread(pm_feed, rd, (const uint8_t *)S.src, r->a->size, gen);
  } catch (...) {
    g.feeder = nullptr;
    return fail(NB_ERR, "no host thread (or memory for its times) to feed the copy engine");
  }
  for (double t0 = pm_now(); g.first.load() == 0 && pm_now() - t0 < PM_ARM_TIMEOUT_S;) sched_yield();
  if (g.first.load() != 1) {
    int st = pm_quiesce();
    return st ? st : fail(NB_ERR, "the copies beside the compute kernel: the first had not landed after %.0f s", PM_ARM_TIMEOUT_S);
  }
  return 0;
}

// The family's arm hook (nvshbench.cu: timed_launch, before the first
// event): the side work of the copy engine's rows; nothing for the others.
static int pm_arm(Run *r) {
  if (pm_ce_timed(r->a)) return pm_arm_compute(r);
  if (pm_ce_fed(r->a)) return pm_arm_feeder(r);
  return 0;
}

// pm_busy: how busy the copy engine was in a fed launch's timed window
// [ev0, ev1] (the feeder has ended: every span is known): the share of
// the window its copies covered, and the bytes they moved in it (a span
// across an edge counted for its part inside). A window of
// PM_BUSY_WINDOW_MS or more is judged, and the launch fails where the
// share is under PM_BUSY_MIN: the compute ran partly alone, its slowdown
// understated; unless a copy took under PM_FEED_HEADROOM times the
// feeder's calls for it (a feeder without headroom: not judged, the point
// says so). pm_end writes the point's figures.
static int pm_busy(Run *r) {
  PmSide &g = g_pms;
  float w0 = 0, w1 = 0;
  CK(cudaEventSynchronize(S.ev1));
  CK(cudaEventElapsedTime(&w0, g.t0, S.ev0));
  CK(cudaEventElapsedTime(&w1, g.t0, S.ev1));
  double busy = 0, moved = 0, win = (double)w1 - w0;
  for (const auto &sp : g.spans) {
    double lo = sp.pre > w0 ? sp.pre : w0, hi = sp.post < w1 ? sp.post : w1, bytes = (double)r->a->size * sp.k;
    if (hi > lo) {
      busy += hi - lo;
      moved += bytes * (hi - lo) / ((double)sp.post - sp.pre);
    } else if (sp.post == sp.pre && sp.pre >= w0 && sp.pre <= w1) {
      moved += bytes;  // under the events' resolution
    }
  }
  double feed_us = g.feed_n ? 1e6 * g.feed_s / g.feed_n : 0, t_us = 1e3 * g.t_copy;
  if (win < PM_BUSY_WINDOW_MS) return 0;
  double share = busy / win;
  if (share < PM_BUSY_MIN && feed_us * PM_FEED_HEADROOM > t_us) {
    g.busy_unfed++;
    g.feed_max = feed_us > g.feed_max ? feed_us : g.feed_max;
    return 0;
  }
  g.busy_min = g.busy_n ? (share < g.busy_min ? share : g.busy_min) : share;
  g.busy_n++;
  g.moved += moved;
  g.window_ms += win;
  g.feed_max = feed_us > g.feed_max ? feed_us : g.feed_max;
  if (share < PM_BUSY_MIN)
    return fail(NB_ERR,
                "the copy engine beside the compute kernel was busy %.1f %% of a %.2f ms launch (under %.0f %%; a copy of %lld bytes "
                "%.3g us, the feeder's calls %.3g us a copy, %d copies between two events, %d spans queued): its feeder thread fell "
                "behind (descheduled? mpirun binds a rank to one core), and the compute's slowdown would be understated",
                100 * share, win, 100 * PM_BUSY_MIN, (long long)r->a->size, t_us, feed_us, g.k, g.depth);
  return 0;
}

// The family's disarm hook (nvshbench.cu: timed_launch, on every path
// after a successful arm). A background compute gets its stop write after
// what S.stream holds (the copies where they were enqueued, then the end
// event: the harness waits on no call of ours between them; at once where
// that cannot be ordered), and is waited for, with the deadline it may
// have run out. A fed launch's feeder is joined: it ends by itself once
// the compute has ended, or at once where the launch failed. Nothing a
// launch armed runs after its disarm.
static int pm_disarm(Run *r, int ok) {
  PmSide &g = g_pms;
  if (pm_ce_timed(r->a)) {
    int rc = pm_stop_bg(1);
    int st = pm_quiesce();
    if (!rc) rc = st;
    if (!rc && g.ready && g.host[1]) rc = pm_deadline_failure();
    return rc;
  }
  if (pm_ce_fed(r->a)) {
    int rc = pm_quiesce(!ok);
    return rc || !ok ? rc : pm_busy(r);
  }
  return 0;
}

// The family's end hook (nb_run, after a point's launches): nothing armed
// should be left (pm_disarm ends it after every launch); a safety net, so
// that with --no-verify too nothing of the point writes after it. A fed
// point's initiator gives how busy the copy engine was (pm_end_fed), and
// every copy-engine point's initiator the SM check's answer for its target
// (pm_sm_value), as values.
//
// pm_end_fed: where the shim judged the fed launches, the least busy share
// of a judged window (ce_busy) and the rate its copies moved in them
// (ce_bytes_per_s), with a copy's time (ce_copy_s) and the most CPU time
// the feeder spent in its calls a copy (ce_feed_s); where a copy took
// under twice the feeder's calls for it (not judged), the two times only;
// where no launch lasted PM_BUSY_WINDOW_MS, nothing. Its launches are
// every launch of the point (calibration and warm-up too: the family does
// not know which launches are samples; README says so).
static int pm_end_fed(Run *r, nb_result *res) {
  PmSide &g = g_pms;
  if (!pm_ce_fed(r->a) || !g.ready || (g.busy_unfed == 0 && g.busy_n == 0)) return 0;
  int st = 0;
  if (g.busy_unfed == 0) {
    st = put_value(res, "ce_busy", "1", g.busy_min);
    if (!st) st = put_value(res, "ce_bytes_per_s", "B/s", g.moved / (g.window_ms * 1e-3));
  }
  if (!st) st = put_value(res, "ce_copy_s", "s", 1e-3 * g.t_copy);
  if (!st) st = put_value(res, "ce_feed_s", "s", 1e-6 * g.feed_max);
  return st;
}

static int pm_end(Run *r, nb_result *res) {
  int rc = pm_quiesce();
  if (pm_mech(r->a) == NB_OP_PM_CE && r->initiator) {
    int st = pm_end_fed(r, res);
    if (!st) st = pm_sm_value(r, res);
    if (!rc) rc = st;
  }
  return rc;
}

static void pm_side_streams_free(void) {
  PmSide &g = g_pms;
  if (!g.streams) return;
  cudaStreamDestroy(g.bg);
  cudaStreamDestroy(g.stop);
  g.streams = 0;
}

// pm_side_free: nb_finalize's: the side work ended, its streams, events
// and pinned words freed.
static void pm_side_free(void) {
  PmSide &g = g_pms;
  (void)pm_quiesce();  // nothing where no point prepared the side work
  // A side stream still running (pm_quiesce's drain ran out of time) or
  // failed may yet touch the mapped words: the background compute writes
  // them, the stop write reads them. They are left allocated (a leak of 64
  // bytes) rather than freed under it. Events may be destroyed with work
  // pending (the driver frees them once it completes).
  int busy = g.streams && (cudaStreamQuery(g.bg) != cudaSuccess || cudaStreamQuery(g.stop) != cudaSuccess);
  g.ready = 0;
  auto ev = [](cudaEvent_t &e) {
    if (e) cudaEventDestroy(e);
    e = nullptr;
  };
  ev(g.ordered);
  ev(g.copied);
  ev(g.computed);
  ev(g.t0);
  for (int i = 0; i < PM_FEED_MAX; i++) {
    ev(g.pre[i]);
    ev(g.post[i]);
  }
  std::vector<PmSpan>().swap(g.spans);
  pm_mapped_free(&g.host, &g.host_dev, busy);
  pm_sm_free();  // before the streams: a holder still on bg keeps its words
  pm_side_streams_free();
}

// pm_launch_fed: compute kernel C on every SM, the alone row's kernel
// (budget 0), timed while the feeder copies beside it; the event after it
// tells the feeder when to stop.
template <int C>
static int pm_launch_fed(Run *r, int iters) {
  PmSide &g = g_pms;
  if (!g.feeder) return fail(NB_ERR, "a compute kernel beside the copy engine: no copies fed (a CUDA graph cannot capture this row)");
  int st = pm_launch_kernel<0, C, 1>(r, iters, nullptr);
  cudaError_t e = cudaEventRecord(g.computed, S.stream);
  if (e == cudaSuccess) g.computed_gen.store(g.seq);
  else {
    g.cancel.store(1);
    if (!st) st = fail(NB_ERR, "cudaEventRecord after the compute kernel: %s", cudaGetErrorString(e));
  }
  g.hold.store(0);
  return st;
}

// A transfer (OP a mechanism), alone or beside a compute kernel; or a
// compute kernel (OP == NB_OP_PM_FMA / NB_OP_PM_MMA), alone or beside a
// transfer.
template <int OP>
static int launch_pm(Run *r, int iters) {
  const Args *a = r->a;
  int m = pm_mech(a);
  if constexpr (OP == NB_OP_PM_FMA || OP == NB_OP_PM_MMA)
    if (m == NB_OP_PM_CE) return pm_launch_fed<OP>(r, iters);
  uint8_t *dst = nullptr;
  if (m == NB_OP_PM_PUT) dst = S.dst;  // symmetric: NVSHMEM's put names the PE
  else if (m == NB_OP_PM_LSA) dst = g_pm_lsa;
  else if (m) dst = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  if (m && !dst) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  if constexpr (OP == NB_OP_PM_FMA || OP == NB_OP_PM_MMA) {
    return with_pm(m, [&](auto mm) -> int {
      constexpr int M = decltype(mm)::value;
      if constexpr (M == NB_OP_PM_FMA || M == NB_OP_PM_MMA) return fail(NB_ERR, "a compute kernel beside a compute kernel");
      else return pm_launch_kernel<M, OP, 1>(r, iters, dst);
    });
  } else {
    return with_pm(a->impl, [&](auto cc) -> int {
      constexpr int C = decltype(cc)::value;
      if constexpr (C == 0 || C == NB_OP_PM_FMA || C == NB_OP_PM_MMA) return pm_launch_kernel<OP, C, 0>(r, iters, dst);
      else return fail(NB_ERR, "a transfer beside a transfer");
    });
  }
}

// The copy engine into the peer's buffer: no SM of ours (rma.cuh's
// launch_ce's copies). Beside a compute kernel (armed by pm_arm_compute),
// the same copies; the stop write that ends the compute is pm_disarm's,
// after the end event, whatever happened to the copies.
static int launch_pm_ce(Run *r, int iters) {
  if (!pm_ce_timed(r->a)) return launch_ce(r, iters);
  if (!g_pms.ready || !g_pms.armed) return fail(NB_ERR, "the copy engine beside a compute kernel: no compute armed (a CUDA graph cannot capture this row)");
  uint8_t *rd = (uint8_t *)nvshmem_ptr(S.dst, r->target);
  int rc = rd ? 0 : fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  for (int i = 0; !rc && i < iters; i++) {
    cudaError_t e = cudaMemcpyAsync(rd, S.src, r->a->size, cudaMemcpyDeviceToDevice, S.stream);
    if (e != cudaSuccess) rc = fail(NB_ERR, "cudaMemcpyAsync beside the compute kernel: %s", cudaGetErrorString(e));
  }
  return rc;
}

static constexpr OpEntry kPMOps[] = {
    {NB_OP_PM_ST, "rma.pm_st", &kPM, T_PAYLOAD | T_LOADSTORE, kCheckPm, launch_pm<NB_OP_PM_ST>},
    {NB_OP_PM_TMA, "rma.pm_tma", &kPM, T_PAYLOAD | T_LOADSTORE, kCheckPm, launch_pm<NB_OP_PM_TMA>},
    {NB_OP_PM_PUT, "rma.pm_put", &kPM, T_PAYLOAD, kCheckPm, launch_pm<NB_OP_PM_PUT>},
    {NB_OP_PM_LSA, "rma.pm_lsa", &kPM, T_PAYLOAD | T_LOADSTORE, kCheckPm, launch_pm<NB_OP_PM_LSA>},
    {NB_OP_PM_CE, "rma.pm_ce", &kPM, T_PAYLOAD | T_LOADSTORE | T_HOST, kCheckPm, launch_pm_ce},
    {NB_OP_PM_FMA, "rma.pm_fma", &kPM, 0, kCheckPm, launch_pm<NB_OP_PM_FMA>},
    {NB_OP_PM_MMA, "rma.pm_mma", &kPM, 0, kCheckPm, launch_pm<NB_OP_PM_MMA>},
};
NB_CHECKED(kPMOps);
