// moe_plan.cuh: the host side of a MoE point in progress: its layout and
// routing tables (moe_layout.h, run under the shim's argument checks), the
// host's view of those tables, the kernels' arguments and the uploads.

static MoeLayout g_ml;  // the point in progress
static MoeHost g_moe;   // its routing, every rank's (rebuilt per point)

static void moe_free(void) { moe_host_free(&g_moe); }  // nb_finalize

// The j-th slot of (expert l, source src) at dest, and the arrivals.
static int64_t moe_hroff(const MoeLayout &L, int d, int l, int src) { return g_moe.roff[((int64_t)d * L.el + l) * L.n + src]; }
static int64_t moe_hcnt(const MoeLayout &L, int r, int e) { return g_moe.cnt[(int64_t)r * L.e + e]; }
static int64_t moe_hpairs(const MoeLayout &L, int src, int d) { return g_moe.pairs[src * L.n + d]; }
static const int32_t *moe_hroute(const MoeLayout &L, int r, int t) { return g_moe.route + ((int64_t)r * L.t + t) * L.k; }
// Messages src gets back from d in a combine (as moe_back).
static int64_t moe_hback(const MoeLayout &L, int src, int d) {
  if (L.mode == MOE_NORMAL) return moe_hpairs(L, src, d);
  int64_t c = 0;
  for (int l = 0; l < L.el; l++) c += moe_hcnt(L, src, d * L.el + l);
  return c;
}
// The slots of dest's experts (every source's messages to them).
static int64_t moe_hslots(const MoeLayout &L, int d) {
  int64_t ns = 0;
  for (int l = 0; l < L.el; l++)
    for (int src = 0; src < L.n; src++) ns += moe_hcnt(L, src, d * L.el + l);
  return ns;
}

// moe_check_args refuses a workload the layout cannot hold.
static int moe_check_args(const Args *a) {
  if (a->tokens <= 0 || a->topk <= 0 || a->experts <= 0 || a->hidden <= 0) return fail(NB_ERR, "MoE: tokens, top-k, experts and hidden must be positive");
  if (a->topk > a->experts) return fail(NB_ERR, "MoE: top-k %d > %d experts", a->topk, a->experts);
  if (a->topk > 8) return fail(NB_ERR, "MoE: top-k %d: at most 8", a->topk);
  if (a->experts % S.npes) return fail(NB_ERR, "MoE: %d experts do not divide by %d PEs", a->experts, S.npes);
  if (S.npes > 64) return fail(NB_ERR, "MoE: at most 64 PEs");
  if (a->dtype == MOE_FP8 && a->hidden % 128) return fail(NB_ERR, "MoE: fp8 needs hidden a multiple of 128");
  if (a->moe_mode != MOE_LL && a->moe_mode != MOE_NORMAL) return fail(NB_ERR, "MoE: mode %d", a->moe_mode);
  return 0;
}

// moe_plan computes every rank's routing and the layout into g_moe and L
// (local, no GPU).
static int moe_plan(const Args *a, MoeLayout *L) {
  if (int rc = moe_check_args(a)) return rc;
  moe_shape(L, S.npes, a->tokens, a->topk, a->experts, a->hidden, a->dtype, a->moe_mode);
  if (moe_plan_host(&g_moe, L, a->seed, a->zipf, NB_MAX_CTAS)) return fail(NB_ERR, "MoE: no host memory for the routing");
  return 0;
}

static int moe_lsa(const Args *a) { return a->impl == NB_IMPL_LSA_ONESHOT; }
static int moe_host_nccl(const Args *a) { return a->impl == NB_IMPL_NCCL; }

// The buffer every peer reaches (NVSHMEM's symmetric destination, or NCCL's
// window); NCCL from the host lays the same slots out in S.dst.
static uint8_t *moe_remote(const Args *a) {
#if NB_NCCL_DEVICE
  if (moe_lsa(a)) return (uint8_t *)g_nd.dst;
#endif
  (void)a;
  return S.dst;
}

static MoeArgs moe_args(void) {
  MoeArgs m;
  m.L = g_ml, m.me = S.me, m.local = S.scratch, m.tokens = S.src;
  return m;
}

// A host table uploaded to the local buffer at off.
static int moe_put(int64_t off, const void *h, int64_t bytes) {
  if (bytes > 0) CK(cudaMemcpyAsync(S.scratch + off, h, bytes, cudaMemcpyHostToDevice, S.stream));
  CK(cudaStreamSynchronize(S.stream));  // the host copy may be freed after
  return 0;
}
