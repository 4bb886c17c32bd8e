// pm_feed.cuh: the copies a host thread feeds the copy engine beside a
// timed compute kernel (persm/compute/<compute>/beside-ce; pm_ce.cuh says
// how the two rows of the copy engine beside a compute kernel run): the
// feeder thread, its depth, and how busy it kept the copy engine in each
// timed window (pm_busy), which the point's values say (pm_end_fed).

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
static void pm_feed(PmCopy copy, uint8_t *dst, const uint8_t *src, int64_t size, unsigned long long gen) {
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
      for (int i = 0; i < k && e == cudaSuccess; i++) e = copy(dst, src, size, g.bg);
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
  PmCopy copy = nullptr;
  uint8_t *rd = nullptr;
  if (int st = pm_with_mech(r->a->impl, [&](auto m) {
        using M = decltype(m);
        if constexpr (!M::sms) copy = M::copy, rd = pm_dst<M>(r);
        return 0;
      }))
    return st;
  if (!rd || !copy) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
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
    g.feeder = new std::thread(pm_feed, copy, rd, (const uint8_t *)S.src, r->a->size, gen);
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

// pm_launch_fed: compute kernel C on every SM, the alone row's kernel
// (budget 0), timed while the feeder copies beside it; the event after it
// tells the feeder when to stop.
template <typename C>
static int pm_launch_fed(Run *r, int iters) {
  PmSide &g = g_pms;
  if (!g.feeder) return fail(NB_ERR, "a compute kernel beside the copy engine: no copies fed (a CUDA graph cannot capture this row)");
  int st = pm_launch_kernel<PmNone, C, 1>(r, iters, nullptr, 0);
  cudaError_t e = cudaEventRecord(g.computed, S.stream);
  if (e == cudaSuccess) g.computed_gen.store(g.seq);
  else {
    g.cancel.store(1);
    if (!st) st = fail(NB_ERR, "cudaEventRecord after the compute kernel: %s", cudaGetErrorString(e));
  }
  g.hold.store(0);
  return st;
}
