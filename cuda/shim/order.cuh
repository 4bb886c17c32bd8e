// order.cuh: NVSHMEM's ordering and synchronisation on a CUDA stream, the
// host-issued forms beside the device quiet and barrier (latency.cuh,
// coll_barrier.cuh): each iteration is one call enqueued on the stream, the
// events around the launch's calls time them (no kernel of ours: no
// in-kernel stamps).
//   lat.quiet_on_stream    the initiator: nvshmemx_putmem_on_stream of 8 bytes to
//                          the peer, then nvshmemx_quiet_on_stream (the
//                          on-stream twin of latency/quiet's p + quiet);
//   lat.barrier_on_stream  every PE: nvshmemx_barrier_all_on_stream;
//   lat.sync_all_on_stream every PE: nvshmemx_sync_all_on_stream (no
//                          completion of earlier puts, only arrival).
// The barriers are checked as the device barrier is (coll_barrier.cuh:
// rounds of writes to every PE around the call under test).

enum {
  NB_OP_QUIET_ON_STREAM = 67,
  NB_OP_BARRIER_ON_STREAM = 68,
  NB_OP_SYNC_ON_STREAM = 69,
};

static int order_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = S.me == a->initiator;
  r->target = r->initiator ? a->peer : a->initiator;
  if (a->op == NB_OP_QUIET_ON_STREAM && (a->size <= 0 || a->size > S.buf))
    return fail(NB_ERR, "size %lld outside 1..%lld", (long long)a->size, (long long)S.buf);
  return 0;
}

// The quiet is the initiator's; a barrier is every PE's, all starting together.
static int order_active(Run *r) { return r->a->op == NB_OP_QUIET_ON_STREAM ? r->initiator : 1; }
static int order_synced(Run *r) { return r->a->op != NB_OP_QUIET_ON_STREAM; }

static int order_prepare(Run *r) {
  const Args *a = r->a;
  if (a->op != NB_OP_QUIET_ON_STREAM) {
    k_zero_u64<<<1, 64, 0, S.stream>>>((uint64_t *)S.scratch, S.npes);  // the barrier check's words
    CKLAUNCH("barrier words");
    return 0;
  }
  int rc = fill_src(a->size, a->seed);
  if (!rc && a->verify) rc = poison_dst(a->size);
  return rc;
}

static int64_t order_bytes(Run *r) { return r->a->op == NB_OP_QUIET_ON_STREAM && r->initiator ? r->a->size : 0; }
static int64_t order_work_set(Run *r) { return r->a->op == NB_OP_QUIET_ON_STREAM ? r->a->size : 0; }

template <int OP>
static int launch_order_on_stream(Run *r, int iters) {
  for (int i = 0; i < iters; i++) {
    if constexpr (OP == NB_OP_QUIET_ON_STREAM) {
      nvshmemx_putmem_on_stream(S.dst, S.src, r->a->size, r->target, S.stream);
      nvshmemx_quiet_on_stream(S.stream);
    } else if constexpr (OP == NB_OP_BARRIER_ON_STREAM) {
      nvshmemx_barrier_all_on_stream(S.stream);
    } else if constexpr (OP == NB_OP_SYNC_ON_STREAM) {
      nvshmemx_sync_all_on_stream(S.stream);
    } else {
      static_assert(unhandled<OP>, "an on-stream call without a branch");
    }
  }
  CKLAUNCH("on-stream call");
  return 0;
}

// Issued from the host: not calibrated by a kernel's loop, ten a launch by
// default; no in-kernel timer.
static constexpr Family kOrder = {.name = "on-stream ordering",
                                  .validate = order_validate,
                                  .active = order_active,
                                  .synced = order_synced,
                                  .cal_iters = 10,
                                  .prepare = order_prepare,
                                  .bytes = order_bytes,
                                  .work_set = order_work_set};
NB_FAMILY(kOrder);

static constexpr OpEntry kOrderOps[] = {
    {NB_OP_QUIET_ON_STREAM, "lat.quiet_on_stream", &kOrder, T_PAYLOAD | T_ROUNDTRIP | T_HOST, kCheckAtPeer, launch_order_on_stream<NB_OP_QUIET_ON_STREAM>},
    {NB_OP_BARRIER_ON_STREAM, "lat.barrier_on_stream", &kOrder, T_ROUNDTRIP | T_HOST, kCheckBarrier, launch_order_on_stream<NB_OP_BARRIER_ON_STREAM>},
    {NB_OP_SYNC_ON_STREAM, "lat.sync_on_stream", &kOrder, T_ROUNDTRIP | T_HOST, kCheckBarrier, launch_order_on_stream<NB_OP_SYNC_ON_STREAM>},
};
NB_CHECKED(kOrderOps);
