// rate.cuh: issue rates, how fast a kernel can hand NVSHMEM 8-byte messages
// apart from how fast bytes land (NVSHMEM's perftest has an nbi message-rate
// test): the initiator towards the peer, as the rma family.
//   rma.rate_put  every scope group (thread, warp, CTA) puts its own 8-byte
//                 message with putmem_nbi at its scope, iters times; one
//                 quiet ends the launch (T_MESSAGES: a message a group);
//   rma.rate_p    every thread p's its own uint64 word, iters times, one
//                 quiet at the end (T_COUNTERS: a message a thread).

enum {
  NB_OP_RATE_PUT = 65,
  NB_OP_RATE_P = 66,
};

// One scope group's burst: iters 8-byte putmem_nbi's of its own slot g, no
// quiet (the rate kernel's body; newer.cuh's runs it inside an RMA region).
template <int SCOPE>
__device__ static inline void rate_put_burst(uint8_t *dst, const uint8_t *src, int iters, int peer) {
  int64_t groups, g;
  group_of(SCOPE, &groups, &g);
  for (int it = 0; it < iters; it++) {
    if (SCOPE == NB_SCOPE_BLOCK) nvshmemx_putmem_nbi_block(dst + 8 * g, src + 8 * g, 8, peer);
    else if (SCOPE == NB_SCOPE_WARP) nvshmemx_putmem_nbi_warp(dst + 8 * g, src + 8 * g, 8, peer);
    else nvshmem_putmem_nbi(dst + 8 * g, src + 8 * g, 8, peer);
  }
}

template <int SCOPE>
__global__ void k_rate_put(uint8_t *dst, const uint8_t *src, int iters, int peer, int64_t *st) {
  stamp_begin(st);
  rate_put_burst<SCOPE>(dst, src, iters, peer);
  nvshmem_quiet();
  stamp_end(st);
}

// base: the operations each word saw before this launch; a word ends at
// the count of its p's (as the atomics' set).
__global__ void k_rate_p(uint64_t *words, int iters, int peer, uint64_t base, int64_t *st) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) nvshmem_uint64_p(words + t, base + it + 1, peer);
  nvshmem_quiet();
  stamp_end(st);
}

// A message per group (rate_put) or per thread (rate_p), 8 bytes each.
static int64_t rate_slots(const Args *a) { return a->op == NB_OP_RATE_P ? (int64_t)a->ctas * a->threads : scope_groups(a); }

static int rate_validate(Run *r) {
  const Args *a = r->a;
  pair_roles(r, 0);
  if (a->size != 8) return fail(NB_ERR, "a message rate moves 8-byte messages, not %lld", (long long)a->size);
  if (a->ctas <= 0 || a->threads <= 0 || a->threads > 1024) return fail(NB_ERR, "launch %d x %d is invalid", a->ctas, a->threads);
  if (a->scope == NB_SCOPE_WARP && a->threads % 32) return fail(NB_ERR, "warp scope needs whole warps");
  if (rate_slots(a) * 8 > S.buf) return fail(NB_ERR, "%lld message slots do not fit the buffer", (long long)rate_slots(a));
  if (r->initiator && has(r, T_LOADSTORE) && nvshmem_ptr(S.dst, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d: the check reads each word's last p", r->target, S.me);
  return 0;
}

static int rate_prepare(Run *r) {
  const Args *a = r->a;
  if (a->op == NB_OP_RATE_P) {
    k_zero_u64<<<256, 256, 0, S.stream>>>((uint64_t *)S.dst, rate_slots(a));
    CKLAUNCH("word reset");
    return 0;
  }
  int rc = fill_src(8 * rate_slots(a), a->seed);
  if (!rc && a->verify) rc = poison_dst(8 * rate_slots(a));
  return rc;
}

static int64_t rate_bytes(Run *r) { return r->initiator ? 8 : 0; }
static int64_t rate_work_set(Run *r) { return 8 * rate_slots(r->a); }

template <int OP>
static int launch_rate(Run *r, int iters) {
  const Args *a = r->a;
  if constexpr (OP == NB_OP_RATE_P) {
    launched(r, k_rate_p, a->ctas, a->threads);
    k_rate_p<<<a->ctas, a->threads, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, (uint64_t)r->ops, S.times);
  } else if constexpr (OP == NB_OP_RATE_PUT) {
    with_scope(a->scope, [&](auto sc) {
      auto k = k_rate_put<decltype(sc)::value>;
      launched(r, k, a->ctas, a->threads);
      k<<<a->ctas, a->threads, 0, S.stream>>>(S.dst, S.src, iters, r->target, S.times);
    });
  } else {
    static_assert(unhandled<OP>, "a message rate without a branch");
  }
  CKLAUNCH("message rate kernel");
  return 0;
}

// Every group's message at its slot of the target, the initiator's pattern.
static Region at_message_slots(Run *r) { return rma_put_from(r) < 0 ? nowhere() : region(S.dst, 8 * rate_slots(r->a), 1); }
NB_CHECK(kCheckMessages, "every group's 8-byte message at its slot of the target", at_message_slots, put_pattern);

static constexpr Family kRate = {.name = "message rate",
                                 .validate = rate_validate,
                                 .active = rma_active,
                                 .synced = rma_synced,
                                 .cal_iters = 1,
                                 .prepare = rate_prepare,
                                 .bytes = rate_bytes,
                                 .work_set = rate_work_set};
NB_FAMILY(kRate);

static constexpr OpEntry kRateOps[] = {
    {NB_OP_RATE_PUT, "rma.rate_put", &kRate, T_MESSAGES, kCheckMessages, launch_rate<NB_OP_RATE_PUT>},
    // Its check reads the last p of each word: in order over load/store only.
    {NB_OP_RATE_P, "rma.rate_p", &kRate, T_COUNTERS | T_LOADSTORE, kCheckCounters, launch_rate<NB_OP_RATE_P>},
};
NB_CHECKED(kRateOps);
