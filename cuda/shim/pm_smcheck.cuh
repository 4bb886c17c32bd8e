// pm_smcheck.cuh: does a copy-engine row's copy need an SM? A mechanism
// with no SM of ours (PmCe: the copy engine) could be assumed to use none,
// but a same-GPU device-to-device cudaMemcpyAsync may run as the driver's
// kernel: beside a kernel holding every CTA slot (32 CTAs of 32 sleeping
// threads an SM) or every thread slot its copies make no progress until
// that kernel exits (docs/bytes-per-sm.md). To a
// peer over NVLink it may use a copy engine: so each process asks, once
// for each target it copies to (pm_sm_check, the mechanism's setup: before
// the point's calibration and warm-up, outside any timed window), and
// every copy-engine point says what it found (pm_end: the value
// ce_sm_free, 1 or 0, where it could judge):
//   k_pm_hold on the side stream bg, as many CTAs of PM_HOLD_THREADS (no
//   shared memory) as the occupancy API says fit on every SM, each
//   spinning (__nanosleep) until the host releases it; once every CTA has
//   started (all co-resident: none ends before the release) one copy, the
//   rows' call (the mechanism's copy from this PE's source into the target's
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
static int pm_sm_check(Run *r, PmCopy copy) {
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
  CK(copy(rd, S.src, n, S.stream));
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
    if (err == cudaSuccess) err = copy(rd, S.src, n, S.stream);
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

// pm_sm_free: nb_finalize's (pm_finalize's); the words stay where a
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
