// ncclp2p.cuh: NCCL's host-driven point-to-point, the baseline beside the
// device put (issue: "device-initiated vs host-driven" as a measured row):
//   rma.nccl_send  one way: the initiator's ncclSend of args.size bytes to the peer,
//                  the peer's ncclRecv (one group a side an operation; on
//                  one PE both in one group, to itself);
//   lat.nccl_pingpong  a round trip: the initiator sends, the peer receives
//                  and sends back, the initiator receives (stream order makes
//                  each wait).
// One launch per operation of NCCL's (its kernels, not ours: no in-kernel
// timer). NCCL refuses two ranks on one GPU (the Go side waives that).

enum {
  NB_OP_NCCL_SEND = 74,
  NB_OP_NCCL_PINGPONG = 75,
};

static const char kP2PComm[] = "/";  // NCCL's own choice of algorithm and protocol (comm_key of no forcing)

static int p2p_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = S.me == a->initiator;
  r->target = r->initiator ? a->peer : a->initiator;
  int64_t span = a->op == NB_OP_NCCL_PINGPONG ? 2 * a->size : a->size;  // a ping-pong's reply lands in a second half
  if (a->size <= 0 || span > S.buf) return fail(NB_ERR, "size %lld outside 1..%lld", (long long)a->size, (long long)(S.buf * a->size / span));
  if (!g_nccl.h) return fail(NB_UNREACHABLE, "%s", g_nccl.why);
  CommEntry *ce = comm_find(kP2PComm);
  if (ce && ce->failed[0]) return fail(NB_ERR, "the NCCL communicator could not be made earlier in this run: %s", ce->failed);
  return 0;
}
// The initiator and its peer take part; every other PE idles.
static int p2p_active(Run *r) { return S.me == r->a->initiator || S.me == r->a->peer; }
static int p2p_synced(Run *) { return 1; }
static int p2p_setup(Run *) { return comm_make(kP2PComm, "", ""); }

// Sources: each side's pattern; the destinations poisoned (a ping-pong's
// two halves: the reply lands in the second).
static int p2p_prepare(Run *r) {
  const Args *a = r->a;
  int rc = fill_src(a->size, a->seed);
  if (!rc && a->verify) rc = poison_dst(a->op == NB_OP_NCCL_PINGPONG ? 2 * a->size : a->size);
  return rc;
}

static int64_t p2p_bytes(Run *r) { return r->initiator ? r->a->size : 0; }
static int64_t p2p_work_set(Run *r) { return r->a->size; }

template <int OP>
static int launch_p2p(Run *r, int iters) {
  const Args *a = r->a;
  CommEntry *ce = comm_find(kP2PComm);
  if (!ce || ce->failed[0]) return fail(NB_ERR, "no NCCL communicator for send/recv");
  int me = S.me, from = a->initiator, peer = a->peer;
  size_t n = (size_t)a->size;
  for (int i = 0; i < iters; i++) {
    if constexpr (OP == NB_OP_NCCL_SEND) {
      NCK(g_nccl.groupStart());
      if (me == from) NCK(g_nccl.send(S.src, n, ncclUint8, peer, ce->comm, S.stream));
      if (me == peer) NCK(g_nccl.recv(S.dst, n, ncclUint8, from, ce->comm, S.stream));
      NCK(g_nccl.groupEnd());
    } else if constexpr (OP == NB_OP_NCCL_PINGPONG) {
      // Ping: initiator -> peer (into the peer's dst); pong: peer ->
      // initiator (into the initiator's dst + size). On one PE, each is one
      // group to itself.
      NCK(g_nccl.groupStart());
      if (me == from) NCK(g_nccl.send(S.src, n, ncclUint8, peer, ce->comm, S.stream));
      if (me == peer) NCK(g_nccl.recv(S.dst, n, ncclUint8, from, ce->comm, S.stream));
      NCK(g_nccl.groupEnd());
      NCK(g_nccl.groupStart());
      if (me == peer) NCK(g_nccl.send(S.src, n, ncclUint8, from, ce->comm, S.stream));
      if (me == from) NCK(g_nccl.recv(S.dst + n, n, ncclUint8, peer, ce->comm, S.stream));
      NCK(g_nccl.groupEnd());
    } else {
      static_assert(unhandled<OP>, "an NCCL point-to-point operation without a branch");
    }
  }
  return 0;
}

// One way: the initiator's pattern at the peer. A ping-pong: that, and the
// peer's pattern back at the initiator (the second half of its
// destination).
static Region at_p2p_peer(Run *r) { return S.me != r->a->peer ? nowhere() : region(S.dst, r->a->size, 1); }
static Region at_p2p_reply(Run *r) { return S.me != r->a->initiator ? nowhere() : region(S.dst + r->a->size, r->a->size, 1); }
static int peer_pattern(Run *r, Region w, nb_result *res) { return check_bytes((const uint8_t *)w.p, w.n, 0, r->a->peer, r->a->seed, res); }
NB_CHECK(kCheckSent, "the initiator's pattern at the peer", at_p2p_peer, pattern_of_initiator);
static int pingpong_verify(Run *r, nb_result *res) {
  int rc = kCheckSent.verify(r, res);
  if (rc) return rc;
  return CheckAt<at_p2p_reply, peer_pattern>::verify(r, res);
}
static constexpr Check kCheckPingPong = {"the initiator's pattern at the peer, the peer's back at the initiator", pingpong_verify,
                                         CheckAt<at_p2p_reply, peer_pattern>::corrupt};

// NCCL's kernels: no stamps of ours; ten launches calibrate.
static constexpr Family kP2P = {.name = "nccl point-to-point",
                                .validate = p2p_validate,
                                .active = p2p_active,
                                .synced = p2p_synced,
                                .cal_iters = 10,
                                .prepare = p2p_prepare,
                                .setup = p2p_setup,
                                .bytes = p2p_bytes,
                                .work_set = p2p_work_set};
NB_FAMILY(kP2P);

static constexpr OpEntry kP2POps[] = {
    {NB_OP_NCCL_SEND, "rma.nccl_send", &kP2P, T_PAYLOAD | T_HOST, kCheckSent, launch_p2p<NB_OP_NCCL_SEND>},
    {NB_OP_NCCL_PINGPONG, "lat.nccl_pingpong", &kP2P, T_PAYLOAD | T_ROUNDTRIP | T_HOST, kCheckPingPong, launch_p2p<NB_OP_NCCL_PINGPONG>},
};
NB_CHECKED(kP2POps);
