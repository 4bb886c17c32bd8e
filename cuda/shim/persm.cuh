// persm.cuh: bytes per SM (issue 32), the family. Which transfer mechanism
// moves data with the fewest SMs, and what a transfer costs a compute
// kernel beside it. Included by nvshbench.cu after the files of its parts:
//   pm_mech.cuh     the mechanisms and compute kernels, each a struct and a word of its list
//   pm_kernels.cuh  the fused kernel (a transfer role and a compute role) and its launch
//   pm_ce.cuh       the side work beside a mechanism with no SM of ours (the copy engine)
//   pm_feed.cuh     the copies a host thread feeds beside a timed compute kernel
//   pm_smcheck.cuh  whether the copy engine's copies need an SM after all
// and after nccldev.cuh (whose NCCL windows the LSA mechanism uses).
//
// A point is a transfer on a budget of SMs: args.ctas CTAs of PM_THREADS
// threads, each holding PM_SMEM bytes of shared memory, more than half an
// SM's, so no two CTAs share an SM (one CTA is one SM of the budget). The
// mechanisms move args.size bytes from this PE's source into the peer's
// destination (this PE's own buffer on one PE), every iteration ending
// delivered. A mechanism with no SM of ours (the copy engine) has no budget.
//
// Interference: args.impl names the partner, by its code: a transfer
// beside a compute kernel (impl = a compute kernel's code) or a compute
// kernel beside a transfer (op a compute kernel's entry, impl = a
// mechanism's code; 0: alone), in one fused launch (pm_kernels.cuh), or
// beside the copy engine on two streams (pm_ce.cuh).

// pm_validate_copies: a point of copies of no SM of ours beside a compute
// kernel (either row): its streams must overlap and be armed per launch.
static int pm_validate_copies(const Args *a) {
  if (a->graph)
    return fail(NB_NOT_CAPTURABLE, "not capturable: a background kernel on a second stream (the copy engine beside a compute kernel)");
  if (a->bidir)
    return fail(NB_ERR,
                "the copy engine beside a compute kernel is one-way: bidirectional, both PEs would arm a cooperative compute kernel "
                "on every SM (and a feeder), each PE's copies landing in a GPU busy with the other's side work");
  if (const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS"); conn && atoi(conn) == 1)
    return fail(NB_UNREACHABLE,
                "CUDA_DEVICE_MAX_CONNECTIONS=1: every stream shares one hardware queue, so the copies (or the compute) timed on "
                "one stream would wait behind the other that runs beside them on a second stream, never overlapping them");
  double deadline_s = PM_BG_DEADLINE_NS * 1e-9;
  if (pm_ce_timed(a) && a->iters > 0 && (double)a->size * a->iters > PM_CE_SLOW_BPS * deadline_s / 2)
    return fail(NB_ERR,
                "%d copies of %lld bytes in one launch beside a compute kernel: at %.0f GB/s (a slow copy-engine path) they would "
                "take over %.0f s, half the compute's %.0f s deadline: fewer --iters (or none: calibrated to ~20 ms)",
                a->iters, (long long)a->size, PM_CE_SLOW_BPS / 1e9, deadline_s / 2, deadline_s);
  return 0;
}

// pm_validate_mech: mechanism M's rules for a point it moves (or runs
// beside): the sizes it moves, a load/store mapping to the target where it
// needs one, a budget where it runs on SMs, and its own needs.
template <typename M>
static int pm_validate_mech(Run *r) {
  const Args *a = r->a;
  if constexpr (M::sms) {
    if (a->ctas < 1) return fail(NB_ERR, "a transfer of SMs needs a budget of at least one SM");
  }
  if (a->size % M::align) return fail(NB_ERR, "%s moves multiples of %lld bytes: size %lld is not one", M::op, (long long)M::align, (long long)a->size);
  if (int st = M::validate(r)) return st;
  if (M::loadstore && r->initiator && nvshmem_ptr(S.dst, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d (no P2P mapping)", r->target, S.me);
  return 0;
}

// pm_validate_offset: a stage offset is a timed transfer's whose bytes
// pass through shared-memory stages (M::staged), in 16-byte steps (a bulk
// copy's shared-memory address is 16-byte aligned) below PM_MAX_OFFSET.
static int pm_validate_offset(const Args *a) {
  if (a->stage_offset == 0) return 0;
  bool staged = false;
  if (pm_is_mech(a->op))
    pm_with_mech(a->op, [&](auto mm) {
      using M = decltype(mm);
      if constexpr (M::sms) staged = M::staged;
      return 0;
    });
  if (!staged) return fail(NB_ERR, "a stage offset (%d bytes) is a staged transfer's (TMA): this point stages nothing in shared memory", a->stage_offset);
  if (a->stage_offset < 0 || a->stage_offset >= PM_MAX_OFFSET || a->stage_offset % 16)
    return fail(NB_ERR, "a stage offset of %d bytes: 0 to %d in steps of 16 (a bulk copy's shared-memory address is 16-byte aligned)", a->stage_offset,
                PM_MAX_OFFSET - 16);
  return 0;
}

static int pm_validate(Run *r) {
  // rma's checks (roles, size, launch shape, the load/store mapping of the
  // entries that state it), with a launch of at least one CTA: a compute
  // kernel on every SM has no transfer budget (args.ctas 0).
  const Args *a = r->a;
  Args shape = *a;
  if (pm_is_compute(shape.op) && shape.ctas == 0) shape.ctas = 1;
  r->a = &shape;
  int st = rma_validate(r);
  r->a = a;
  if (st || (st = pm_validate_offset(a))) return st;
  int m = pm_mech(a), c = pm_comp(a);
  if (pm_is_mech(a->op) && a->impl != 0 && !pm_is_compute(a->impl))
    return fail(NB_ERR, "a transfer's partner (args.impl %d) is a compute kernel's code", a->impl);
  if (pm_is_compute(a->op) && a->impl != 0 && !pm_is_mech(a->impl))
    return fail(NB_ERR, "a compute kernel's partner (args.impl %d) is a transfer mechanism's code", a->impl);
  if (m && !pm_on_sms(m) && c && (st = pm_validate_copies(a))) return st;
  if (m && !pm_on_sms(m) && !c) return 0;  // copies alone: rma's checks
  if (!(pm_is_mech(a->op) && !pm_on_sms(a->op)) && a->threads != PM_THREADS)
    return fail(NB_ERR, "bytes per SM: one CTA of %d threads an SM, not %d", PM_THREADS, a->threads);
  if (a->ctas > S.sms) return fail(NB_ERR, "a budget of %d SMs: this GPU has %d", a->ctas, S.sms);
  int b = pm_budget(a);
  if (c && b >= S.sms) return fail(NB_ERR, "a compute kernel beside %d transfer SMs needs one of this GPU's %d left", b, S.sms);
  if (c && PM_OUT_OFF + pm_out_floats(c, b) * 4 > S.buf)
    return fail(NB_ERR, "the compute kernel's results need %lld bytes of scratch", (long long)(PM_OUT_OFF + pm_out_floats(c, b) * 4));
  return m ? pm_with_mech(m, [&](auto mm) { return pm_validate_mech<decltype(mm)>(r); }) : 0;
}

static int pm_prepare(Run *r) {
  (void)pm_quiesce();  // an earlier point's side work (its failure was that point's)
  int st = rma_prepare(r);  // this PE's pattern in its source, its destination poisoned
  int m = pm_mech(r->a), c = pm_comp(r->a);
  if (st || !c) return st;
  if (m && !pm_on_sms(m))
    st = pm_with_mech(m, [&](auto mm) {
      using M = decltype(mm);
      if constexpr (M::sms) return 0;
      else return pm_with_compute(c, [&](auto cc) { return pm_ce_prepare<M, decltype(cc)>(); });
    });
  if (st) return st;
  k_zero_u64<<<8, 256, 0, S.stream>>>(pm_counts(), NB_MAX_CTAS + 1);  // and the done word
  CKLAUNCH("count reset");
  k_fill_words<uint32_t><<<256, 256, 0, S.stream>>>((uint32_t *)pm_out(), pm_out_floats(c, pm_budget(r->a)), 0xFFFFFFFFu);  // NaN
  CKLAUNCH("result poison");
  return 0;
}

// The mechanism's setup, on every PE after agreement 1 (LSA's windows,
// collective; the copy engine's SM check on an initiator, which lands in
// the target's destination poisoned before agreement 1 and poisons it
// again).
static int pm_setup(Run *r) {
  int m = pm_mech(r->a);
  return m ? pm_with_mech(m, [&](auto mm) { return decltype(mm)::setup(r); }) : 0;
}

static int64_t pm_bytes(Run *r) { return r->initiator && pm_is_mech(r->a->op) ? r->a->size : 0; }
static int64_t pm_work_set(Run *r) { return pm_is_mech(r->a->op) ? r->a->size : pm_out_floats(r->a->op, pm_budget(r->a)) * 4; }

// --- the side work beside the timed launches (SideWork, common.cuh): the
// copy engine's rows' (pm_ce.cuh, pm_feed.cuh); nothing for the others.
// arm (timed_launch, before the first event) starts the background compute
// or the feeder. disarm (on every path after a successful arm): a
// background compute gets its stop write after what S.stream holds (the
// copies where they were enqueued, then the end event: the harness waits
// on no call of ours between them; at once where that cannot be ordered),
// and is waited for, with the deadline it may have run out; a fed launch's
// feeder is joined: it ends by itself once the compute has ended, or at
// once where the launch failed. Nothing a launch armed runs after its
// disarm. end (after a point's launches): nothing armed should be left; a
// safety net, so that with --no-verify too nothing of the point writes
// after it; a fed point's initiator gives how busy the copy engine was
// (pm_end_fed), and every copy-engine point's initiator the SM check's
// answer for its target (pm_sm_value), as values.
static int pm_arm(Run *r) {
  if (pm_ce_timed(r->a)) return pm_arm_compute(r);
  if (pm_ce_fed(r->a)) return pm_arm_feeder(r);
  return 0;
}

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

static int pm_end(Run *r, nb_result *res) {
  int rc = pm_quiesce();
  int m = pm_mech(r->a);
  if (m && !pm_on_sms(m) && r->initiator) {
    int st = pm_end_fed(r, res);
    if (!st) st = pm_sm_value(r, res);
    if (!rc) rc = st;
  }
  return rc;
}

static constexpr SideWork kPmSide = {.arm = pm_arm, .disarm = pm_disarm, .end = pm_end};

// pm_finalize: nb_finalize's: the side work ended and freed, the SM
// check's words (before the streams: a holder still on bg keeps its words),
// the side streams.
static void pm_finalize(void) {
  pm_side_free();
  pm_sm_free();
  pm_side_streams_free();
}

static constexpr Family kPM = {.name = "persm",
                               .validate = pm_validate,
                               .active = rma_active,
                               .synced = rma_synced,
                               .cal_iters = 1,
                               .prepare = pm_prepare,
                               .setup = pm_setup,
                               .bytes = pm_bytes,
                               .work_set = pm_work_set,
                               .side = &kPmSide};
NB_FAMILY(kPM);

// --- the checks: the transfer's pattern where its mechanism lands it (a
// timed transfer: a background transfer stops mid-pass when the compute
// ends), the compute kernel's results on the initiator (wherever one ran).
template <typename M>
static Region pm_landing(Run *r) {
  if constexpr (M::dst == PmDst::peer || M::dst == PmDst::symmetric) return at_put_target(r);
  else if constexpr (M::dst == PmDst::lsa) {
#if NB_NCCL_DEVICE
    return at_window_target(r);
#else
    return nowhere();  // pm_validate refuses LSA without NCCL's device API
#endif
  } else {
    static_assert(unhandled_type<M>, "a destination the check does not know");
  }
}
static Region pm_at_transfer(Run *r) {
  Region w = nowhere();
  if (pm_is_mech(r->a->op))
    pm_with_mech(r->a->op, [&](auto m) {
      w = pm_landing<decltype(m)>(r);
      return 0;
    });
  return w;
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
  int budget = pm_budget(r->a);
  int rc = counted(
      c.n, res,
      [&](unsigned long long *cnt) {
        pm_with_compute(pm_comp(r->a), [&](auto cc) {
          k_pm_check<decltype(cc)><<<256, 256, 0, S.stream>>>((const float *)c.p, pm_counts(), c.n, budget, cnt);
          return 0;
        });
      },
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
// pm_launch_copies: mechanism M's copies into the peer's buffer, no SM of
// ours, alone or beside a compute kernel armed in the background
// (pm_arm_compute; the stop write that ends it is pm_disarm's, after the
// end event, whatever happened to the copies).
template <typename M>
static int pm_launch_copies(Run *r, int iters) {
  if (pm_ce_timed(r->a) && (!g_pms.ready || !g_pms.armed))
    return fail(NB_ERR, "the copy engine beside a compute kernel: no compute armed (a CUDA graph cannot capture this row)");
  uint8_t *d = pm_dst<M>(r);
  if (!d) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
  for (int i = 0; i < iters; i++)
    if (cudaError_t e = M::copy(d, S.src, r->a->size, S.stream); e != cudaSuccess)
      return fail(NB_ERR, "%s's copy %d of %d: %s", M::op, i + 1, iters, cudaGetErrorString(e));
  return 0;
}

// launch_pm<K>: a transfer (K a mechanism), alone or beside a compute
// kernel; or a compute kernel (K a compute kernel), alone or beside a
// transfer, or beside copies a host thread feeds.
template <typename K>
static int launch_pm(Run *r, int iters) {
  const Args *a = r->a;
  int budget = pm_budget(a);
  if constexpr (pm_compute<K>::value) {
    return pm_with_mech_or_none(a->impl, [&](auto mm) -> int {
      using M = decltype(mm);
      if constexpr (!std::is_same_v<M, PmNone> && !M::sms) {
        return pm_launch_fed<K>(r, iters);
      } else {
        uint8_t *dst = pm_dst<M>(r);
        if (!std::is_same_v<M, PmNone> && !dst) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
        return pm_launch_kernel<M, K, 1>(r, iters, dst, budget);
      }
    });
  } else if constexpr (!K::sms) {
    return pm_launch_copies<K>(r, iters);
  } else {
    uint8_t *dst = pm_dst<K>(r);
    if (!dst) return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store (no P2P mapping)", r->target);
    return pm_with_compute_or_none(a->impl, [&](auto cc) { return pm_launch_kernel<K, decltype(cc), 0>(r, iters, dst, budget); });
  }
}

// The table's rows, one for each word of the lists (the Go side expands
// these two templates over the lists as the shim does: cuda/shim/persm.go).
#define NB_PM_MECH_ENTRY(M) {M::code, M::op, &kPM, pm_traits<M>(), kCheckPm, launch_pm<M>},
#define NB_PM_COMPUTE_ENTRY(C) {C::code, C::op, &kPM, 0, kCheckPm, launch_pm<C>},
static constexpr OpEntry kPMOps[] = {NB_PM_MECHANISMS(NB_PM_MECH_ENTRY) NB_PM_COMPUTES(NB_PM_COMPUTE_ENTRY)};
NB_CHECKED(kPMOps);
