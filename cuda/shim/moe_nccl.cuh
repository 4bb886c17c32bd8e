// moe_nccl.cuh: the MoE family's NCCL-from-the-host path (what frameworks
// do): a pack kernel, the counts exchanged, ncclSend/ncclRecv per peer in
// one group (an all-to-all-v), an unpack kernel; all inside the timed
// launch. The tables that drive the pack and unpack are built on the host
// from the routing (moe_plan.cuh) when the point is prepared.

// --- Kernels: table-driven gathers and scatters around one group of sends
// and receives. A table row is {from, to} in messages: copy bytes from
// src + from x sstride to dst + to x dstride (one warp a row).
__global__ void k_moe_move(uint8_t *dst, int64_t dstride, const uint8_t *src, int64_t sstride, const int64_t *rows, int64_t n, int64_t bytes) {
  int lane = threadIdx.x % 32;
  for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += (int64_t)gridDim.x * blockDim.x / 32)
    group_copy(dst + rows[2 * r + 1] * dstride, src + rows[2 * r] * sstride, bytes, lane, 32);
}

// Normal mode's arrivals received through NCCL, fanned out as the device
// implementations do (moe_fanout).
__global__ void k_moe_fan(MoeArgs m, const uint8_t *pay, const uint8_t *hdr, uint8_t *slots, uint8_t *smeta, int64_t n) {
  uint64_t ep = moe_epoch(m);
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32)
    moe_fanout(m, ep, (const MoeMetaN *)(hdr + j * 32), pay + j * m.L.tok, slots, smeta);
  moe_epoch_end(m, ep);
}

// Normal combine's partial sums, staged in arrival order (one warp each).
__global__ void k_moe_partials(MoeArgs m, const uint8_t *slots, uint8_t *stage, int64_t n) {
  for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += (int64_t)gridDim.x * blockDim.x / 32)
    moe_partial(m, (const MoeMetaN *)(m.local + m.L.o_list + j * 64), slots, stage + j * m.L.out);
}

__global__ void k_moe_reduce(MoeArgs m, const uint8_t *comb, const int64_t *pos) { moe_reduce(m, comb, pos); }

// --- The plan of this PE: the tables and the sizes of each peer's
// sections (in messages), for the dispatch or the combine step.
struct MoeNccl {
  int64_t scnt[64], soff[64], rcnt[64], roff[64];  // per peer: messages sent/received and where their section starts
  int64_t nsend, nrecv;
  int64_t o_pack, o_hpack, o_unpack, o_hunpack, o_pos;  // table offsets in the local buffer (o_tab)
  int64_t o_hsend, o_hrecv, o_csend, o_crecv;           // header sections and the counts, after the payloads
};
static MoeNccl g_mn;

// The host tables being built: rows {from, to} of the payloads' and the
// headers' packs and unpacks, and a combine's positions.
struct MoeTabs {
  int64_t *pack, *hpack, *unpack, *hunpack, *pos;
  int64_t np, nh, nu, nhu;
};

static void moe_row(int64_t *tab, int64_t *n, int64_t from, int64_t to) {
  tab[2 * *n] = from, tab[2 * *n + 1] = to;
  (*n)++;
}

// Whether token tk of this PE has an expert on rank d.
static int moe_on(const MoeLayout &L, int tk, int d) {
  int on = 0;
  for (int k = 0; k < L.k; k++) on |= moe_hroute(L, S.me, tk)[k] / L.el == d;
  return on;
}

// f(tk, k) for each selection k of this PE's token tk of an expert on rank
// d, by expert then token (the order ll sends them to d).
template <class F>
static void moe_each_selection_to(const MoeLayout &L, int d, F f) {
  for (int l = 0; l < L.el; l++)
    for (int tk = 0; tk < L.t; tk++)
      for (int k = 0; k < L.k; k++)
        if (moe_hroute(L, S.me, tk)[k] == d * L.el + l) f(tk, k);
}

// moe_nccl_dispatch_tables: send per destination (ll: by expert then token,
// each selection; normal: by token, each token with an expert there);
// receive per source, in the order it sent; ll unpacks into the slot of
// (expert, source) in token order (the combine's layout too).
static void moe_nccl_dispatch_tables(const MoeLayout &L, MoeTabs *T) {
  int n = L.n, me = S.me, el = L.el;
  for (int d = 0; d < n; d++) {
    g_mn.soff[d] = g_mn.nsend;
    if (L.mode == MOE_LL) {
      moe_each_selection_to(L, d, [&](int tk, int k) {
        moe_row(T->pack, &T->np, tk, g_mn.nsend);
        moe_row(T->hpack, &T->nh, (int64_t)tk * L.k + k, g_mn.nsend);
        g_mn.nsend++;
      });
    } else {
      for (int tk = 0; tk < L.t; tk++) {
        if (!moe_on(L, tk, d)) continue;
        moe_row(T->pack, &T->np, tk, g_mn.nsend);
        moe_row(T->hpack, &T->nh, (int64_t)tk * n + d, g_mn.nsend);
        g_mn.nsend++;
      }
    }
    g_mn.scnt[d] = g_mn.nsend - g_mn.soff[d];
  }
  for (int src = 0; src < n; src++) {
    g_mn.roff[src] = g_mn.nrecv;
    if (L.mode == MOE_LL) {
      for (int l = 0; l < el; l++) {
        int64_t c = moe_hcnt(L, src, me * el + l);
        for (int64_t j = 0; j < c; j++) {
          moe_row(T->unpack, &T->nu, g_mn.nrecv, moe_hroff(L, me, l, src) + j);
          moe_row(T->hunpack, &T->nhu, g_mn.nrecv, moe_hroff(L, me, l, src) + j);
          g_mn.nrecv++;
        }
      }
    } else {
      g_mn.nrecv += moe_hpairs(L, src, me);  // fanned out on the device (moe_fanout)
    }
    g_mn.rcnt[src] = g_mn.nrecv - g_mn.roff[src];
  }
}

// moe_nccl_combine_tables: this rank sends each source its expert outputs
// (ll: its slots of that source, by expert then token; normal: one partial
// per arrival, in arrival order); the token's rank receives per rank and
// sums at the positions pos.
static void moe_nccl_combine_tables(const MoeLayout &L, MoeTabs *T) {
  int n = L.n, me = S.me, el = L.el;
  for (int src = 0; src < n; src++) {
    g_mn.soff[src] = g_mn.nsend;
    if (L.mode == MOE_LL) {
      for (int l = 0; l < el; l++)
        for (int64_t j = 0; j < moe_hcnt(L, src, me * el + l); j++) moe_row(T->pack, &T->np, moe_hroff(L, me, l, src) + j, g_mn.nsend++);
    } else {
      g_mn.nsend += moe_hpairs(L, src, me);
    }
    g_mn.scnt[src] = g_mn.nsend - g_mn.soff[src];
  }
  for (int d = 0; d < n; d++) {
    g_mn.roff[d] = g_mn.nrecv;
    if (L.mode == MOE_LL) {
      moe_each_selection_to(L, d, [&](int tk, int k) { T->pos[(int64_t)tk * L.k + k] = g_mn.nrecv++; });
    } else {
      for (int tk = 0; tk < L.t; tk++)
        if (moe_on(L, tk, d)) T->pos[(int64_t)tk * n + d] = g_mn.nrecv++;
    }
    g_mn.rcnt[d] = g_mn.nrecv - g_mn.roff[d];
  }
}

// moe_nccl_upload places the tables at o_tab, the header and count
// sections after the payloads in the staging buffers, and uploads the
// tables and the counts this rank sends each peer (what the receiver
// learns first).
static int moe_nccl_upload(const MoeLayout &L, const MoeTabs &T, int combine) {
  int64_t o = L.o_tab;
  g_mn.o_pack = o, o += 16 * T.np;
  g_mn.o_hpack = o, o += 16 * T.nh;
  g_mn.o_unpack = o, o += 16 * T.nu;
  g_mn.o_hunpack = o, o += 16 * T.nhu;
  g_mn.o_pos = o;
  int64_t npos = (int64_t)L.t * (L.mode == MOE_LL ? L.k : L.n);
  g_mn.o_hsend = L.o_send + moe_align256(g_mn.nsend * L.sz);
  g_mn.o_hrecv = L.o_recv + moe_align256(g_mn.nrecv * L.sz);
  g_mn.o_csend = g_mn.o_hsend + moe_align256(g_mn.nsend * 32);
  g_mn.o_crecv = g_mn.o_hrecv + moe_align256(g_mn.nrecv * 32);
  if (g_mn.o_crecv + 8 * 64 > L.local || 16 * (T.np + T.nh + T.nu + T.nhu) + (combine ? 8 * npos : 0) > L.o_seen - L.o_tab)
    return fail(NB_ERR, "MoE: NCCL's staging does not fit its layout (a bug)");
  int rc = moe_put(g_mn.o_pack, T.pack, 16 * T.np);
  if (!rc) rc = moe_put(g_mn.o_hpack, T.hpack, 16 * T.nh);
  if (!rc) rc = moe_put(g_mn.o_unpack, T.unpack, 16 * T.nu);
  if (!rc) rc = moe_put(g_mn.o_hunpack, T.hunpack, 16 * T.nhu);
  if (!rc && combine) rc = moe_put(g_mn.o_pos, T.pos, 8 * npos);
  if (!rc) rc = moe_put(g_mn.o_csend, g_mn.scnt, 8 * L.n);
  return rc;
}

// moe_prepare_nccl builds the host implementation's tables (local).
static int moe_prepare_nccl(int combine) {
  const MoeLayout &L = g_ml;
  memset(&g_mn, 0, sizeof g_mn);
  int64_t rows = moe_rows(&L);
  MoeTabs T = {(int64_t *)malloc(16 * rows), (int64_t *)malloc(16 * rows), (int64_t *)malloc(16 * rows), (int64_t *)malloc(16 * rows),
               (int64_t *)malloc(8 * ((int64_t)L.t * (L.k > L.n ? L.k : L.n))), 0, 0, 0, 0};
  int rc = 0;
  if (!T.pack || !T.hpack || !T.unpack || !T.hunpack || !T.pos) rc = fail(NB_ERR, "MoE: no host memory for NCCL's tables");
  else if (combine) moe_nccl_combine_tables(L, &T);
  else moe_nccl_dispatch_tables(L, &T);
  if (!rc) rc = moe_nccl_upload(L, T, combine);
  free(T.pack), free(T.hpack), free(T.unpack), free(T.hunpack), free(T.pos);
  return rc;
}

// --- The operation.

// One group of sends and receives of each peer's section.
static int moe_exchange(ncclComm_t c, const uint8_t *send, uint8_t *recv, int64_t bytes) {
  if (g_nccl.groupStart() != ncclSuccess) return fail(NB_ERR, "ncclGroupStart");
  ncclResult_t nr = ncclSuccess;
  for (int q = 0; q < S.npes && nr == ncclSuccess; q++) {
    if (g_mn.scnt[q] > 0) nr = g_nccl.send(send + g_mn.soff[q] * bytes, g_mn.scnt[q] * bytes, ncclUint8, q, c, S.stream);
    if (nr == ncclSuccess && g_mn.rcnt[q] > 0) nr = g_nccl.recv(recv + g_mn.roff[q] * bytes, g_mn.rcnt[q] * bytes, ncclUint8, q, c, S.stream);
  }
  ncclResult_t e = g_nccl.groupEnd();
  if (nr != ncclSuccess || e != ncclSuccess) return fail(NB_ERR, "NCCL send/recv: %s", g_nccl.errorString(nr != ncclSuccess ? nr : e));
  return 0;
}

// The counts a framework exchanges before the data (each receiver's
// sizes): one int64 to every peer, in one group.
static int moe_exchange_counts(ncclComm_t c) {
  const int64_t *send = (const int64_t *)(S.scratch + g_mn.o_csend);
  int64_t *recv = (int64_t *)(S.scratch + g_mn.o_crecv);
  if (g_nccl.groupStart() != ncclSuccess) return fail(NB_ERR, "ncclGroupStart");
  ncclResult_t nr = ncclSuccess;
  for (int q = 0; q < S.npes && nr == ncclSuccess; q++) {
    nr = g_nccl.send(send + q, 8, ncclUint8, q, c, S.stream);
    if (nr == ncclSuccess) nr = g_nccl.recv(recv + q, 8, ncclUint8, q, c, S.stream);
  }
  ncclResult_t e = g_nccl.groupEnd();
  if (nr != ncclSuccess || e != ncclSuccess) return fail(NB_ERR, "NCCL counts: %s", g_nccl.errorString(nr != ncclSuccess ? nr : e));
  return 0;
}

// One operation of NCCL from the host: pack, the counts, the data, unpack.
static int moe_nccl_once(Run *r) {
  const Args *a = r->a;
  const MoeLayout &L = g_ml;
  MoeArgs m = moe_args();
  uint8_t *loc = S.scratch;
  char key[64];
  comm_key(a, key, sizeof key);
  CommEntry *ce = comm_find(key);
  if (!ce || ce->failed[0]) return fail(NB_ERR, "no NCCL communicator %s", key);
  int combine = a->op == NB_OP_MOE_COMBINE;
  int64_t bytes = combine ? L.out : L.tok, hbytes = L.mode == MOE_LL ? 16 : 32;
  const int64_t *tab = (const int64_t *)loc;
  if (!combine) {
    k_moe_move<<<1024, 256, 0, S.stream>>>(loc + L.o_send, L.tok, S.src, L.tok, tab + g_mn.o_pack / 8, g_mn.nsend, L.tok);
    k_moe_move<<<256, 256, 0, S.stream>>>(loc + g_mn.o_hsend, hbytes, loc + L.o_list, hbytes, tab + g_mn.o_hpack / 8, g_mn.nsend, hbytes);
  } else if (L.mode == MOE_LL) {
    k_moe_move<<<1024, 256, 0, S.stream>>>(loc + L.o_send, L.out, S.dst + L.o_slot, L.sz, tab + g_mn.o_pack / 8, g_mn.nsend, L.out);
  } else {
    k_moe_partials<<<1024, 256, 0, S.stream>>>(m, S.dst + L.o_slot, loc + L.o_send, g_mn.nsend);
  }
  CKLAUNCH("MoE pack");
  if (int rc = moe_exchange_counts(ce->comm)) return rc;
  if (int rc = moe_exchange(ce->comm, loc + L.o_send, loc + L.o_recv, bytes)) return rc;
  if (!combine) {
    if (int rc = moe_exchange(ce->comm, loc + g_mn.o_hsend, loc + g_mn.o_hrecv, hbytes)) return rc;
    if (L.mode == MOE_LL) {
      k_moe_move<<<1024, 256, 0, S.stream>>>(S.dst + L.o_slot, L.sz, loc + L.o_recv, L.tok, tab + g_mn.o_unpack / 8, g_mn.nrecv, L.tok);
      k_moe_move<<<256, 256, 0, S.stream>>>(S.dst + L.o_smeta, 16, loc + g_mn.o_hrecv, 16, tab + g_mn.o_hunpack / 8, g_mn.nrecv, 16);
    } else {
      k_moe_fan<<<a->ctas, a->threads, 0, S.stream>>>(m, loc + L.o_recv, loc + g_mn.o_hrecv, S.dst + L.o_slot, S.dst + L.o_smeta, g_mn.nrecv);
    }
  } else {
    k_moe_reduce<<<1024, 256, 0, S.stream>>>(m, loc + L.o_recv, tab + g_mn.o_pos / 8);
  }
  CKLAUNCH("MoE unpack");
  return 0;
}
