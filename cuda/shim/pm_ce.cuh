// pm_ce.cuh: bytes per SM's side work beside a mechanism with no SM of
// ours, the copy engine (cudaMemcpyAsync: no kernel of ours, so it cannot
// be a role of the fused launch). Beside a compute kernel it runs on its
// own streams, the compute on every SM:
//   persm/ce/beside-<compute>  the copies timed on S.stream as persm/ce's; the compute in the
//           background on a second stream, started by arm before the first event (it waits until
//           every CTA runs), ended by a copy-engine write of the stop word that disarm enqueues
//           after the end event, ordered after the copies: no SM needed while every SM computes,
//           and no call of ours between the copies and the event
//   persm/compute/<compute>/beside-ce  the compute on every SM timed as the alone row's (the
//           same kernel); the copies fed beside it by a host thread that arm starts (a copy must
//           have landed before the first event) and that keeps about PM_FEED_AHEAD_MS of copies
//           queued (k copies between two events, k and the depth timed from the point's first
//           copies) until the compute has ended; disarm waits for it (or cancels it, the launch
//           failed) and measures, from the copies' own events, how busy the copy engine was in
//           the timed window: a launch where it idled is failed (pm_busy), unless a copy is
//           shorter than the feeder's calls for it (then no feeder could keep it busy: the
//           point's values say so, not judged)
// Neither can be captured in a CUDA graph (a second stream, a host thread).
// The family's SideWork (kPmSide, persm.cuh) starts and ends them around
// the timed launches.

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

// The point's roles: its transfer mechanism (0: none) and compute kernel
// (0: none), by code; the transfer's SMs: args.ctas, none where its
// mechanism has none (its compute partner has every SM), and none for a
// compute kernel alone with args.ctas 0 (every SM: the copy engine's
// partner alone).
static int pm_mech(const Args *a) { return pm_is_mech(a->op) ? a->op : a->impl; }
static int pm_comp(const Args *a) { return pm_is_compute(a->op) ? a->op : a->impl; }
static int pm_budget(const Args *a) { return pm_mech(a) && !pm_on_sms(pm_mech(a)) ? 0 : a->ctas; }
// Copies of no SM of ours timed beside a compute kernel in the background
// (persm/ce/beside-<compute>), and a compute kernel timed beside such
// copies a host thread feeds (persm/compute/<compute>/beside-ce).
static int pm_ce_timed(const Args *a) { return pm_is_mech(a->op) && !pm_on_sms(a->op) && pm_is_compute(a->impl); }
static int pm_ce_fed(const Args *a) { return pm_is_compute(a->op) && pm_is_mech(a->impl) && !pm_on_sms(a->impl); }

// The side streams, the words the kernels and the host share (mapped,
// pinned host memory: the host reads them without a CUDA call while the
// GPU is busy), the feeder thread (pm_feed.cuh). The feeder keeps
// PM_FEED_AHEAD_MS of copies queued: a host thread that shares its core
// with another (mpirun binds a rank to one core, where the harness's
// thread waits too) may be descheduled for a time slice, about a
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
// falls behind at its first hiccup (small copies, whose time is near the
// feeder's calls); the point's values say so, with both times.
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

// pm_ce_prepare: a point of M's copies beside compute kernel C (either
// row): the side streams' events and words, both kernels loaded (the first
// launch's load would otherwise stand inside a judged window: the
// compute's launch between ev0 and its kernel while the feeder's 2 ms of
// copies drain, its busy share judged on every launch; the background
// compute's while the copies wait to be timed), the point's figures reset.
template <typename M, typename C>
static int pm_ce_prepare(void) {
  if (int st = pm_side_init()) return st;
  if (int st = pm_kernel_ready<PmNone, C, 1>()) return st;  // the compute fed copies beside it
  if (int st = pm_kernel_ready<M, C, 0>()) return st;       // the compute behind the timed copies
  PmSide &g = g_pms;
  g.host[1] = 0;
  g.depth = g.k = 0;  // timed again at this point's size
  g.t_copy = 0;
  g.busy_n = g.busy_unfed = 0;
  g.busy_min = g.moved = g.window_ms = g.feed_max = 0;
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


// pm_launch_bg launches compute kernel C on every SM in the background of
// M's copies: a cooperative launch (co-resident or refused) on the side
// stream, its CTAs polling the done word for the launch's number; its
// stamps are not the harness's (the copies are what is timed).
template <typename M, typename C>
static int pm_launch_bg(Run *r, unsigned long long seq) {
  auto k = k_pm<M, C, 0>;
  if (int st = pm_kernel_ready<M, C, 0>()) return st;
  PmArgs p = pm_args(r, 0, nullptr, 0, seq, pm_bgstamps());
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
  int st = pm_with_mech(r->a->op, [&](auto m) {
    using M = decltype(m);
    if constexpr (M::sms) return fail(NB_ERR, "%s runs on SMs: no compute is armed beside it", M::op);
    else return pm_with_compute(r->a->impl, [&](auto c) { return pm_launch_bg<M, decltype(c)>(r, seq); });
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

static void pm_side_streams_free(void) {
  PmSide &g = g_pms;
  if (!g.streams) return;
  cudaStreamDestroy(g.bg);
  cudaStreamDestroy(g.stop);
  g.streams = 0;
}

// pm_side_free: nb_finalize's (pm_finalize): the side work ended, its
// events and pinned words freed (the streams after the SM check's words:
// pm_side_streams_free).
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
}
