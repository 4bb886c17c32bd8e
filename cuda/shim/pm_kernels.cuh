// pm_kernels.cuh: bytes per SM's one fused kernel, k_pm: CTAs below the
// budget transfer with a mechanism, the others compute (pm_mech.cuh's
// structs), one role timed while the other runs beside it in the
// background; the check of the compute's results; the launch of k_pm.
//
// Both roles run in ONE fused launch of one CTA per SM: two kernels on two
// streams would not be sure to share the GPU (the first grid may take every
// SM before the second starts, or the second may wait for the first to
// end: the overlap would be the scheduler's choice, not the point's); a
// fused launch is co-resident by construction, and the launch is
// cooperative, so a grid that cannot be co-resident fails instead of
// deadlocking. The timed role does its iterations; the other runs in the
// background until the timed role's CTAs have all finished (a counter in
// device memory), so the events time the timed role with the other beside
// it all along. Every compute CTA records its iterations; the check reads
// them and the results.

#define PM_SLICE (256 << 10)  // a background transfer looks at the stop word after each slice of its chunk
#define PM_OUT_OFF (16 << 10)  // scratch: [0, 8 KiB) n per CTA, [8 KiB] the done counter, results from 16 KiB
#define PM_STARTED_OFF (8192 + 8)  // scratch: the CTAs of a background compute that have started (beside the copy engine)
#define PM_BGSTAMPS_OFF (8192 + 32)  // scratch: that compute's launch stamps (not the harness's: nothing of ours is timed in it)
// A compute kernel beside the copy engine stops on its own after this long
// (and says so, failing the point): were the stop write never to come (the
// copies waiting for an SM), the launch would otherwise never end.
#define PM_BG_DEADLINE_NS 10000000000ull
// A launch of copies beside it must end well within that deadline: with a
// fixed --iters, pm_validate refuses one that would take over half of it
// at PM_CE_SLOW_BPS, a slow copy-engine path (a PCIe peer; an NVLink peer
// or the GPU's own memory is far faster). A calibrated launch is far
// shorter than the deadline.
#define PM_CE_SLOW_BPS 10e9

static uint64_t *pm_counts(void) { return (uint64_t *)S.scratch; }
static unsigned long long *pm_done(void) { return (unsigned long long *)(S.scratch + 8192); }
static unsigned long long *pm_started(void) { return (unsigned long long *)(S.scratch + PM_STARTED_OFF); }
static int64_t *pm_bgstamps(void) { return (int64_t *)(S.scratch + PM_BGSTAMPS_OFF); }
static float *pm_out(void) { return (float *)(S.scratch + PM_OUT_OFF); }

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

// The two roles are functions of their own (__noinline__), the partner
// an argument: a timed role alone and beside its partner runs the same
// machine code, so a difference between the two is the partner's, never
// a compilation's (inlined into each fused kernel, the compute's loop was
// compiled once a kernel: alone, and beside each mechanism).

// pm_transfer_role: transfer CTA blockIdx.x (of the budget) moves its share
// with mechanism M (M::split: its chunk, or its words of the whole buffer
// beside the budget's other CTAs): iters times (timed), or in slices until
// the timed compute is done (BACKGROUND); partner: a compute runs beside it.
template <typename M, int BACKGROUND>
__device__ __noinline__ static void pm_transfer_role(const PmArgs &p, uint8_t *smem, int partner) {
  uint32_t phases = 0;
  M::begin(smem);
  int64_t off = 0, len = p.size;
  PmShare sh = {(int)blockIdx.x, p.budget};
  if constexpr (M::split == PmSplit::chunks) {
    pm_chunk(p.size, p.budget, blockIdx.x, &off, &len);
    sh = {0, 1};
  }
  // Both buffers are global memory (this GPU's or a peer's, mapped): said,
  // so the copies are global loads and stores, as in a kernel whose
  // pointer arguments the compiler takes for global, not generic ones.
  uint8_t *dst = p.dst;
  const uint8_t *src = p.src;
  __builtin_assume(__isGlobal(dst));
  __builtin_assume(__isGlobal(src));
  auto move = [&](int64_t o, int64_t n) {
    if (n > 0) M::move(dst + off + o, src + off + o, n, sh, p.peer, smem, phases);  // n is the same for every thread of the CTA
  };
  if constexpr (!BACKGROUND) {
    for (int it = 0; it < p.iters; it++) move(0, len);
    if (partner) pm_finished(p);
  } else {
    // Passes over the share, a slice at a time (about PM_SLICE of this
    // CTA's own bytes), until the compute is done.
    int64_t slice = PM_SLICE * (int64_t)sh.ctas;
    for (int64_t o = 0;;) {
      int64_t n = len - o < slice ? len - o : slice;
      move(o, n);
      o = o + n >= len ? 0 : o + n;
      if (pm_stop(p)) return;
    }
  }
}

// pm_compute_role: compute CTA k (of gridDim.x - budget) runs C's iterations:
// iters of them (timed), or until the timed transfer is done (BACKGROUND),
// or, beside the copy engine (CE), until its stop write; partner: a
// transfer runs beside it.
template <typename C, int BACKGROUND, int CE>
__device__ __noinline__ static void pm_compute_role(const PmArgs &p, int partner) {
  int64_t k = blockIdx.x - p.budget;
  uint64_t n = 0;
  C::run(p, k, [&](auto iter) {
    if constexpr (!BACKGROUND) {
      for (int it = 0; it < p.iters; it++) iter();
      n = (uint64_t)p.iters;
      if (partner) pm_finished(p);
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
  });
  if (threadIdx.x == 0) p.counts[blockIdx.x] = n;
}

// The fused launch: CTAs below the budget transfer with M (PmNone: none),
// the others compute C (PmNone: none); TIMED_COMPUTE says which role is
// timed (the other runs in the background while it does). M without SMs
// (the copy engine): no transfer role (budget 0, the copies are not ours):
// every CTA computes in the background until the copy engine's stop write,
// and the last CTA to start tells the host (pm_arm_compute waits for it
// before the copies are timed).
template <typename M, typename C, int TIMED_COMPUTE>
__global__ void __launch_bounds__(PM_THREADS, 1) k_pm(PmArgs p) {
  // 16 bytes: all the relocatable build gives it (tma_aligned, common.cuh).
  extern __shared__ __align__(16) uint8_t pm_smem[];
  constexpr bool partner = !std::is_same_v<M, PmNone>, compute = !std::is_same_v<C, PmNone>, beside_copies = partner && !M::sms;
  stamp_begin(p.st);
  if constexpr (beside_copies) {
    static_assert(compute && !TIMED_COMPUTE, "beside copies of no SM of ours the compute runs in the background");
    if (threadIdx.x == 0 && atomicAdd(p.started, 1ull) == gridDim.x - 1ull) {
      *(volatile unsigned long long *)p.host = p.want;
      __threadfence_system();
    }
  }
  if ((int)blockIdx.x < p.budget) {
    if constexpr (partner && M::sms) pm_transfer_role<M, compute && TIMED_COMPUTE>(p, tma_aligned(pm_smem) + p.stage_offset, compute);
  } else {
    if constexpr (compute) pm_compute_role<C, partner && !TIMED_COMPUTE, beside_copies>(p, partner);
  }
  stamp_end(p.st);
}

// pm_outputs: the floats a CTA of compute kernel code writes (0: none).
static int64_t pm_outputs(int code) {
#define PM_OUT(C) \
  if (code == C::code) return C::outputs;
  NB_PM_COMPUTES(PM_OUT)
#undef PM_OUT
  return 0;
}

// Output floats of compute kernel code beside a budget (on every SM but the budget's).
static int64_t pm_out_floats(int code, int budget) { return (S.sms - budget) * pm_outputs(code); }

// k_pm_check counts the outputs of C that are not their start value plus
// their CTA's iterations (a CTA that ran none is wrong too).
template <typename C>
__global__ void k_pm_check(const float *out, const uint64_t *counts, int64_t n, int budget, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t k = counts[budget + i / C::outputs];
    if (k == 0 || out[i] != C::start(i) + (float)k) mismatch(cnt, i);
  }
}

// pm_kernel_ready: an instantiation of k_pm allowed its shared memory and
// its module loaded (cudaFuncGetAttributes loads it under lazy loading),
// once. The launches call it; the copy engine's rows call it at prepare,
// where the first launch's would otherwise stand inside a judged window
// (pm_ce.cuh).
template <typename M, typename C, int TIMED_COMPUTE>
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

// pm_args: a launch's arguments, budget CTAs of the transfer (M) into dst,
// the compute (C) on the others of grid; want: the timed CTAs.
static PmArgs pm_args(const Run *r, int iters, uint8_t *dst, int budget, unsigned long long want, int64_t *stamps) {
  PmArgs p;
  p.dst = dst;
  p.src = S.src;
  p.size = r->a->size;
  p.iters = iters;
  p.peer = r->target;
  p.budget = budget;
  p.stage_offset = r->a->stage_offset;
  p.want = want;
  p.done = pm_done();
  p.counts = pm_counts();
  p.out = pm_out();
  p.minus1 = -1.0f;
  p.one = 1.0f;
  p.st = stamps;
  p.started = nullptr;
  p.host = nullptr;
  return p;
}

// pm_launch_kernel: one fused launch of iters iterations of the timed role
// on S.stream: the transfer (M) on budget SMs into dst, the compute (C) on
// every other SM where there is one (a cooperative launch: co-resident or
// refused), else the budget's CTAs alone.
template <typename M, typename C, int TIMED_COMPUTE>
static int pm_launch_kernel(Run *r, int iters, uint8_t *dst, int budget) {
  constexpr bool compute = !std::is_same_v<C, PmNone>, both = compute && !std::is_same_v<M, PmNone>;
  auto k = k_pm<M, C, TIMED_COMPUTE>;
  if (int st = pm_kernel_ready<M, C, TIMED_COMPUTE>()) return st;
  int grid = compute ? S.sms : budget;
  launched(r, k, grid, PM_THREADS, PM_SMEM);
  PmArgs p = pm_args(r, iters, dst, budget, (unsigned long long)(TIMED_COMPUTE ? grid - budget : budget), S.times);
  if (both) {
    CK(cudaMemsetAsync(p.done, 0, sizeof *p.done, S.stream));
    void *args[] = {&p};
    CK(cudaLaunchCooperativeKernel((const void *)k, dim3(grid), dim3(PM_THREADS), args, PM_SMEM, S.stream));
  } else {
    k<<<grid, PM_THREADS, PM_SMEM, S.stream>>>(p);
    CKLAUNCH("bytes-per-SM kernel");
  }
  return 0;
}
