// moe.cuh: the MoE family: expert-parallel dispatch (each token to the
// ranks of its top-k experts) and combine (the expert outputs back to the
// token's rank, weighted and summed), the same tokens, routing and checks
// for three implementations (args.impl):
//  - NVSHMEM (NB_IMPL_NVSHMEM_DEVICE; DeepEP's primitive mix): a warp per
//    message, its slot from a remote atomic on the destination's counter
//    of (expert, source), putmem_nbi_warp of the payload and its header,
//    quiet, and the last warp of a (destination, expert) publishing the
//    count with a signal; the receiver waits on the signals;
//  - NCCL's device API (NB_IMPL_LSA_ONESHOT): the same kernels, the peer's
//    window through ncclGetLsaPointer: 16-byte stores, a system-scope
//    atomic, a released store of the signal, acquiring loads;
//  - NCCL from the host (NB_IMPL_NCCL; what frameworks do): a pack kernel,
//    the counts exchanged, ncclSend/ncclRecv per peer in one group (an
//    all-to-all-v), an unpack kernel; all inside the timed launch.
// Modes (args.moe_mode): ll, one message per (token, expert) selection;
// normal, one message per (token, destination rank) carrying its local
// experts, fanned out into the per-expert layout on arrival.
//
// Dispatch ends when every message is in its expert's slot and every count
// is known at the receiver; combine when the weighted sums are on the
// tokens' ranks. Every PE computes every rank's routing (moe_route.h) and
// the layout of the buffers from it (moe_layout.h), the same on every PE.
//
// The family's files: moe_route.h and moe_layout.h (plain C, twinned in
// Go by suites/moe and tested against it), moe_kernels.cuh (the device
// code), moe_plan.cuh (the point's host state), moe_nccl.cuh (NCCL from
// the host), and this file: preparing a point, launching it, the checks
// and the family's entry.

#include "moe_layout.h"

enum { NB_OP_MOE_DISPATCH = 51, NB_OP_MOE_COMBINE = 52 };

#include "moe_kernels.cuh"
#include "moe_plan.cuh"
#include "moe_nccl.cuh"

// --- Preparing a point (local).

// moe_upload_routing: every rank's routing and the tables that follow from
// it, the done words and epochs at zero.
static int moe_upload_routing(const MoeLayout &L) {
  int64_t n = L.n, ntk = n * L.t * L.k;
  int rc;
  if ((rc = moe_put(L.o_route, g_moe.route, 4 * ntk)) || (rc = moe_put(L.o_w, g_moe.w, 4 * ntk)) || (rc = moe_put(L.o_cnt, g_moe.cnt, 8 * n * L.e)) ||
      (rc = moe_put(L.o_roff, g_moe.roff, 8 * n * L.el * n)) || (rc = moe_put(L.o_aoff, g_moe.aoff, 8 * n * n)) ||
      (rc = moe_put(L.o_pairs, g_moe.pairs, 8 * n * n)))
    return rc;
  CK(cudaMemsetAsync(S.scratch + L.o_done, 0, L.o_route - L.o_done, S.stream));  // done words and epochs
  return 0;
}

// moe_dispatch_headers writes each message's header of this PE into list
// (ll: a header per selection; normal: per (token, destination)); their bytes.
static int64_t moe_dispatch_headers(const MoeLayout &L, uint8_t *list) {
  int me = S.me;
  for (int tk = 0; tk < L.t; tk++) {
    const int32_t *ex = moe_hroute(L, me, tk);
    if (L.mode == MOE_LL) {
      for (int k = 0; k < L.k; k++) {
        MoeMeta h = {me, tk, ex[k], k};
        memcpy(list + ((int64_t)tk * L.k + k) * 16, &h, 16);
      }
    } else {
      for (int d = 0; d < L.n; d++) {
        MoeMetaN h;
        memset(&h, 0, sizeof h);
        h.src = me, h.token = tk;
        for (int k = 0; k < L.k; k++)
          if (ex[k] / L.el == d) h.k[h.n++] = (int16_t)k;
        memcpy(list + ((int64_t)tk * L.n + d) * 32, &h, 32);
      }
    }
  }
  return L.mode == MOE_LL ? (int64_t)L.t * L.k * 16 : (int64_t)L.t * L.n * 32;
}

// moe_combine_headers writes, for a combine, the headers of this PE's
// expert slots into slots, in the order NCCL's unpack gives them (by
// expert, source, then token: a selection's slot is its region's start
// plus its rank, moe_slot_ranks), and in normal mode the arrivals (by
// source, then token) with the slots of their local experts into list;
// the bytes of list. rank: t x k words, count: e words of scratch.
static int64_t moe_combine_headers(const MoeLayout &L, MoeMeta *slots, uint8_t *list, int64_t *rank, int64_t *count) {
  int me = S.me, el = L.el;
  int64_t j = 0;
  for (int src = 0; src < L.n; src++) {
    moe_slot_ranks(moe_hroute(L, src, 0), L.t, L.k, L.e, count, rank);
    for (int tk = 0; tk < L.t; tk++) {
      const int32_t *ex = moe_hroute(L, src, tk);
      MoeMetaN h;
      memset(&h, 0, sizeof h);
      h.src = src, h.token = tk;
      int32_t at[8] = {};  // the entries past h.n are never read
      for (int k = 0; k < L.k; k++) {
        if (ex[k] / el != me) continue;
        int64_t s = moe_hroff(L, me, ex[k] % el, src) + rank[(int64_t)tk * L.k + k];
        slots[s] = MoeMeta{src, tk, ex[k], k};
        at[h.n] = (int32_t)s;
        h.k[h.n++] = (int16_t)k;
      }
      if (L.mode != MOE_NORMAL || !h.n) continue;
      memcpy(list + j * 64, &h, 32);
      memcpy(list + j * 64 + 32, at, sizeof at);
      j++;
    }
  }
  return j * 64;
}

// moe_prepare_combine: the expert outputs in this PE's slots (LSA fills
// its window in setup, made there) from the headers staged at o_tab; the
// output poisoned where verified.
static int moe_prepare_combine(const Args *a, const MoeLayout &L, const MoeMeta *slots) {
  int64_t ns = moe_hslots(L, S.me);
  if (int rc = moe_put(L.o_tab, slots, 16 * ns)) return rc;
  uint8_t *rem = moe_remote(a);
  if (!moe_lsa(a) && ns > 0) {
    k_moe_fill_slots<<<1024, 256, 0, S.stream>>>(rem + L.o_slot, rem + L.o_smeta, (const MoeMeta *)(S.scratch + L.o_tab), ns, L.sz, L.out);
    CKLAUNCH("MoE slot fill");
  }
  if (a->verify) CK(cudaMemsetAsync(S.scratch + L.o_outp, 0xA5, (int64_t)L.t * L.out, S.stream));
  return 0;
}

// moe_prepare_lists: the tokens (this PE's pattern) and the headers of a
// dispatch, or a combine's expert outputs and slot lists; uploaded to o_list.
static int moe_prepare_lists(const Args *a, const MoeLayout &L) {
  int combine = a->op == NB_OP_MOE_COMBINE;
  uint8_t *list = (uint8_t *)calloc(1, 64 * moe_rows(&L));
  MoeMeta *slots = (MoeMeta *)calloc(L.max_slots + 1, sizeof(MoeMeta));
  int64_t *rank = (int64_t *)malloc(sizeof(int64_t) * ((int64_t)L.t * L.k + L.e));
  int rc = 0;
  int64_t nlist = 0;
  if (!list || !slots || !rank) {
    rc = fail(NB_ERR, "MoE: no host memory for the headers");
  } else if (!combine) {
    k_fill<<<1024, 256, 0, S.stream>>>(S.src, (int64_t)L.t * L.tok, S.me, a->seed);
    nlist = moe_dispatch_headers(L, list);
  } else {
    nlist = moe_combine_headers(L, slots, list, rank, rank + (int64_t)L.t * L.k);
    rc = moe_prepare_combine(a, L, slots);
  }
  if (!rc) rc = moe_put(L.o_list, list, nlist);
  free(list), free(slots), free(rank);
  return rc;
}

// moe_prepare (local): the routing, the tables, the tokens, the headers, the
// counters at zero, and for a combine the expert outputs in their slots.
static int moe_prepare(Run *r) {
  const Args *a = r->a;
  MoeLayout &L = g_ml;
  int rc;
  if ((rc = moe_plan(a, &L))) return rc;
  if (L.remote > S.buf || L.local > S.buf || (int64_t)L.t * L.tok > S.buf)
    return fail(NB_ERR, "MoE: this routing needs %lld bytes of receive buffer and %lld of tables per PE, the heap holds %lld per buffer",
                (long long)L.remote, (long long)L.local, (long long)S.buf);
  if ((rc = moe_upload_routing(L)) || (rc = moe_prepare_lists(a, L))) return rc;
  int combine = a->op == NB_OP_MOE_COMBINE;
  if (!moe_lsa(a)) {
    CK(cudaMemsetAsync(S.dst, 0, L.o_slot, S.stream));  // counters and signals
    if (!combine && a->verify) CK(cudaMemsetAsync(S.dst + L.o_slot, 0xA5, L.o_arr - L.o_slot, S.stream));  // poisoned slots and headers
  }
  if (moe_host_nccl(a)) return moe_prepare_nccl(combine);
  return 0;
}

// moe_setup (collective): NCCL's communicator or its device objects, and
// for LSA the window's counters, slots and headers.
static int moe_setup(Run *r) {
  const Args *a = r->a;
  if (moe_host_nccl(a)) return nccl_setup(r);
  if (!moe_lsa(a)) return 0;
#if NB_NCCL_DEVICE
  if (int st = nd_ready_all("the LSA dispatch needs load/store access to every rank")) return st;
  const MoeLayout &L = g_ml;
  if (L.remote > S.buf) return fail(NB_ERR, "MoE: the window holds %lld bytes, the routing needs %lld", (long long)S.buf, (long long)L.remote);
  uint8_t *w = (uint8_t *)g_nd.dst;
  CK(cudaMemsetAsync(w, 0, L.o_slot, S.stream));
  if (r->a->op == NB_OP_MOE_COMBINE) {
    int64_t ns = moe_hslots(L, S.me);
    if (ns > 0) {
      k_moe_fill_slots<<<1024, 256, 0, S.stream>>>(w + L.o_slot, w + L.o_smeta, (const MoeMeta *)(S.scratch + L.o_tab), ns, L.sz, L.out);
      CKLAUNCH("MoE slot fill");
    }
  } else if (a->verify) {
    CK(cudaMemsetAsync(w + L.o_slot, 0xA5, L.o_arr - L.o_slot, S.stream));
  }
  CK(cudaStreamSynchronize(S.stream));
  return 0;
#else
  return nd_missing();
#endif
}

static int moe_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = 1;  // every PE runs; PE 0's samples are reported
  r->target = -1;
  if (a->impl != NB_IMPL_NVSHMEM_DEVICE && a->impl != NB_IMPL_LSA_ONESHOT && a->impl != NB_IMPL_NCCL)
    return fail(NB_ERR, "MoE: unknown implementation %d", a->impl);
  if (a->ctas <= 0 || a->ctas > NB_MAX_CTAS || a->threads < 32 || a->threads > 1024 || a->threads % 32)
    return fail(NB_ERR, "MoE: launch %d x %d invalid", a->ctas, a->threads);
  if (moe_lsa(a)) {
    if (int st = nd_headers()) return st;
    if (int st = nd_state()) return st;
  }
  if (moe_host_nccl(a) && !g_nccl.h) return fail(NB_UNREACHABLE, "%s", g_nccl.why);
  return moe_check_args(a);  // the routing and layout: once, in moe_prepare
}

static int moe_active(Run *) { return 1; }
static int moe_synced(Run *) { return 1; }

template <int OP>
static int moe_launch(Run *r, int iters) {
  const Args *a = r->a;
  MoeArgs m = moe_args();
  dim3 g(a->ctas), b(a->threads);
  for (int i = 0; i < iters; i++) {
    if (moe_host_nccl(a)) {
      if (int rc = moe_nccl_once(r)) return rc;
      continue;
    }
    // One kernel an operation: operation i stamps its start at times + i
    // (common.cuh: stamp_begin).
    int64_t *times = S.times + i;
    auto go = [&](auto k, auto tr) {
      launched(r, k, a->ctas, a->threads);
      k<<<g, b, 0, S.stream>>>(tr, m, times);
    };
    auto run = [&](auto tr) {
      using T = decltype(tr);
      if (g_ml.mode == MOE_LL) {
        if constexpr (OP == NB_OP_MOE_DISPATCH) go(k_moe_dispatch<T, MOE_LL>, tr);
        else if constexpr (OP == NB_OP_MOE_COMBINE) go(k_moe_combine<T, MOE_LL>, tr);
        else static_assert(unhandled<OP>, "a MoE operation without a branch");
      } else {
        if constexpr (OP == NB_OP_MOE_DISPATCH) go(k_moe_dispatch<T, MOE_NORMAL>, tr);
        else go(k_moe_combine<T, MOE_NORMAL>, tr);
      }
    };
    if (moe_lsa(a)) {
#if NB_NCCL_DEVICE
      run(MoeLsa{g_nd.wdst, g_nd.dc, S.me});
#else
      return nd_missing();
#endif
    } else {
      run(MoeNvshmem{S.dst});
    }
    CKLAUNCH("MoE kernel");
  }
  return 0;
}

// --- Checks.

// Dispatch: every slot of this PE's experts holds a message of the region
// it sits in: its header names its source and expert, the expert is one of
// the token's selections, no token twice in a region, and the payload is
// the source's token. One warp a slot; a wrong slot counts once.
__global__ void k_moe_check_dispatch(MoeArgs m, const uint8_t *slots, const uint8_t *smeta, unsigned int *seen, int64_t n, int64_t seed,
                                     unsigned long long *cnt) {
  const MoeLayout &L = m.L;
  int lane = threadIdx.x % 32;
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32) {
    MoeMeta h = ((const MoeMeta *)smeta)[j];
    int ok = h.src >= 0 && h.src < L.n && h.token >= 0 && h.token < L.t && h.k >= 0 && h.k < L.k && h.expert >= 0 && h.expert < L.e &&
             h.expert / L.el == m.me && moe_route(m, h.src, h.token, h.k) == h.expert;
    int l = ok ? h.expert % L.el : 0;
    if (ok) {
      int64_t lo = moe_roff(m, m.me, l, h.src);
      ok = j >= lo && j < lo + moe_cnt(m, h.src, h.expert);
    }
    int bad = !ok;
    if (ok) {
      const uint8_t *p = slots + j * L.sz;
      for (int64_t i = lane; i < L.tok; i += 32) bad |= p[i] != pat((int64_t)h.token * L.tok + i, h.src, seed);
    }
    bad = __any_sync(0xffffffffu, bad);
    if (lane == 0 && !bad && atomicAdd(&seen[((int64_t)l * L.n + h.src) * L.t + h.token], 1u) != 0) bad = 1;  // a token twice in its region
    if (lane == 0 && bad) mismatch(cnt, j);
  }
}

// Combine: the token's output is the weighted sum of its experts' outputs,
// to bf16's precision (the sum in fp32, then rounded; normal mode rounds
// each destination's partial too).
__global__ void k_moe_check_combine(MoeArgs m, unsigned long long *cnt) {
  const MoeLayout &L = m.L;
  const __nv_bfloat16 *out = (const __nv_bfloat16 *)(m.local + L.o_outp);
  int64_t h2 = L.out / 2;
  for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < (int64_t)L.t * h2; x += (int64_t)gridDim.x * blockDim.x) {
    int tk = (int)(x / h2);
    int64_t i = x % h2;
    float want = 0;
    for (int k = 0; k < L.k; k++) want += moe_weight(m, m.me, tk, k) * moe_f(m.me, tk, moe_route(m, m.me, tk, k), i);
    float got = __bfloat162float(out[x]);
    if (!(fabsf(got - want) <= 0.02f * fabsf(want) + 0.05f)) mismatch(cnt, x);
  }
}

// The counts every receiver knows: the signals' low words (device
// implementations) or the counts NCCL carried; where they are on this PE
// and how many.
static uint8_t *moe_counts_at(const Args *a, int64_t *words) {
  const MoeLayout &L = g_ml;
  int n = L.n;
  if (moe_host_nccl(a)) return *words = n, S.scratch + g_mn.o_crecv;
  if (a->op == NB_OP_MOE_COMBINE) return *words = n, moe_remote(a) + L.o_csig;
  if (L.mode == MOE_LL) return *words = (int64_t)L.el * n, moe_remote(a) + L.o_sig;
  return *words = n, moe_remote(a) + L.o_sig + 8 * (int64_t)L.el * n;
}

// moe_check_counts checks the counts against the routing.
static int moe_check_counts(const Args *a, nb_result *res) {
  const MoeLayout &L = g_ml;
  int n = L.n, me = S.me;
  int combine = a->op == NB_OP_MOE_COMBINE;
  int64_t bad = 0, checked = 0, words;
  const uint8_t *at = moe_counts_at(a, &words);
  if (moe_host_nccl(a)) {
    int64_t got[64];
    CK(cudaMemcpy(got, at, 8 * words, cudaMemcpyDeviceToHost));
    for (int q = 0; q < n; q++, checked++) bad += got[q] != g_mn.rcnt[q];
  } else {
    uint64_t *got = (uint64_t *)malloc(8 * words);
    if (!got) return fail(NB_ERR, "MoE: no host memory");
    CK(cudaMemcpy(got, at, 8 * words, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < words; i++, checked++) {
      int64_t want;
      if (combine) want = moe_hback(L, me, (int)i);
      else want = L.mode == MOE_LL ? moe_hcnt(L, (int)(i % n), me * L.el + (int)(i / n)) : moe_hpairs(L, (int)i, me);
      bad += (int64_t)(got[i] & 0xffffffffull) != want;
    }
    free(got);
  }
  res->checked += checked;
  res->errors += bad;
  if (bad && !res->detail[0]) snprintf(res->detail, sizeof res->detail, "%lld of %lld counts at the receiver differ from the routing", (long long)bad, (long long)checked);
  return 0;
}

static int moe_check(Run *r, nb_result *res) {
  const Args *a = r->a;
  const MoeLayout &L = g_ml;
  MoeArgs m = moe_args();
  int rc = moe_check_counts(a, res);
  if (rc) return rc;
  if (a->op == NB_OP_MOE_COMBINE)
    return counted((int64_t)L.t * (L.out / 2), res, [&](unsigned long long *cnt) { k_moe_check_combine<<<1024, 256, 0, S.stream>>>(m, cnt); },
                   [&](unsigned long long first, unsigned long long wrong) {
                     snprintf(res->detail, sizeof res->detail, "combined token %llu, element %llu: %llu elements off the weighted sum",
                              first / (L.out / 2), first % (L.out / 2), wrong);
                   });
  int64_t ns = moe_hslots(L, S.me);
  CK(cudaMemsetAsync(S.scratch + L.o_seen, 0, 4 * (int64_t)L.el * L.n * L.t, S.stream));
  uint8_t *rem = moe_remote(a);
  return counted(ns, res,
                 [&](unsigned long long *cnt) {
                   k_moe_check_dispatch<<<1024, 256, 0, S.stream>>>(m, rem + L.o_slot, rem + L.o_smeta, (unsigned int *)(S.scratch + L.o_seen), ns,
                                                                    a->seed, cnt);
                 },
                 [&](unsigned long long first, unsigned long long wrong) {
                   snprintf(res->detail, sizeof res->detail, "expert slot %llu (and %llu in all) does not hold its source's token", first, wrong - 1);
                 });
}

// moe_corrupt damages one element of what moe_check reads on this PE, so
// that the check must find it: a combine's first output value (far off any
// weighted sum), else a byte inverted: a dispatch's first slot's first
// payload byte or, where no slot is this PE's, the first count's low byte.
static int moe_corrupt(Run *r) {
  const Args *a = r->a;
  const MoeLayout &L = g_ml;
  CK(cudaStreamSynchronize(S.stream));
  if (a->op == NB_OP_MOE_COMBINE) {
    __nv_bfloat16 v = __float2bfloat16(1024.0f);
    CK(cudaMemcpy(S.scratch + L.o_outp, &v, sizeof v, cudaMemcpyHostToDevice));
    return 0;
  }
  uint8_t *p;
  if (moe_hslots(L, S.me) > 0) {
    p = moe_remote(a) + L.o_slot;
  } else {
    int64_t words;
    p = moe_counts_at(a, &words);  // little-endian: its first byte is the count's lowest
  }
  uint8_t b;
  CK(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost));
  b ^= 0xff;
  CK(cudaMemcpy(p, &b, 1, cudaMemcpyHostToDevice));
  return 0;
}

// PE 0's selected messages (DeepEP's bandwidth: every selection counted).
static int64_t moe_bytes(Run *r) {
  if (S.me != 0) return 0;
  return (int64_t)g_ml.t * g_ml.k * (r->a->op == NB_OP_MOE_COMBINE ? g_ml.out : g_ml.tok);
}

static int64_t moe_work_set(Run *) { return g_ml.max_slots * g_ml.sz; }

static int moe_per_op_launches(Run *) { return 1; }

static constexpr Family kMoE = {.name = "moe",
                                .validate = moe_validate,
                                .active = moe_active,
                                .synced = moe_synced,
                                .cal_iters = 2,
                                .prepare = moe_prepare,
                                .setup = moe_setup,
                                .bytes = moe_bytes,
                                .work_set = moe_work_set,
                                .per_op_launches = moe_per_op_launches};
NB_FAMILY(kMoE);

static constexpr Check kCheckMoE = {"every token's dispatched rows and combined sum", moe_check, moe_corrupt};
static constexpr OpEntry kMoEOps[] = {
    {NB_OP_MOE_DISPATCH, "moe.dispatch", &kMoE, T_PAYLOAD, kCheckMoE, moe_launch<NB_OP_MOE_DISPATCH>},
    {NB_OP_MOE_COMBINE, "moe.combine", &kMoE, T_PAYLOAD, kCheckMoE, moe_launch<NB_OP_MOE_COMBINE>},
};
NB_CHECKED(kMoEOps);
