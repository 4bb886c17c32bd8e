// strided.cuh: NVSHMEM's strided RMA, iput and iget of uint64_t elements
// at args.scope (thread, warp, block), the initiator towards the peer as the rma
// family's puts and gets. The peer's side is strided (every args.stride-th
// element), the local side contiguous: iput scatters a contiguous array
// into a column of the peer's, iget gathers one. args.size is the bytes
// moved (the elements only, never the gaps); the strided side spans
// size × stride bytes. Each group moves a contiguous run of elements; a put
// ends delivered (quiet) every iteration, as rma.put does. NVSHMEM has no
// strided call over a remote transport: load/store peers only.

enum {
  NB_OP_IPUT = 63,  // nvshmem[x]_uint64_iput[_warp|_block]: local contiguous -> the peer's strided
  NB_OP_IGET = 64,  // nvshmem[x]_uint64_iget[_warp|_block]: the peer's strided -> local contiguous
};

template <int OP, int SCOPE>
__device__ static inline void strided_op(uint64_t *dst, const uint64_t *src, int64_t stride, int64_t n, int peer) {
  if constexpr (OP == NB_OP_IPUT) {
    if (SCOPE == NB_SCOPE_BLOCK) nvshmemx_uint64_iput_block(dst, src, stride, 1, n, peer);
    else if (SCOPE == NB_SCOPE_WARP) nvshmemx_uint64_iput_warp(dst, src, stride, 1, n, peer);
    else nvshmem_uint64_iput(dst, src, stride, 1, n, peer);
  } else if constexpr (OP == NB_OP_IGET) {
    if (SCOPE == NB_SCOPE_BLOCK) nvshmemx_uint64_iget_block(dst, src, 1, stride, n, peer);
    else if (SCOPE == NB_SCOPE_WARP) nvshmemx_uint64_iget_warp(dst, src, 1, stride, n, peer);
    else nvshmem_uint64_iget(dst, src, 1, stride, n, peer);
  } else {
    static_assert(unhandled<OP>, "a strided operation without a branch");
  }
}

// Group g moves elements [off, off + len) of n: the run starts at off on
// the contiguous side and at off × stride on the strided one.
template <int OP, int SCOPE>
__global__ void k_strided(uint64_t *dst, const uint64_t *src, int64_t n, int64_t stride, int iters, int peer, int64_t *st) {
  int64_t groups, g;
  group_of(SCOPE, &groups, &g);
  int64_t per = (n + groups - 1) / groups, off = g * per;
  int64_t len = off >= n ? 0 : (off + per <= n ? per : n - off);
  stamp_begin(st);
  for (int it = 0; it < iters; it++) {
    if (len > 0) {
      if constexpr (OP == NB_OP_IPUT) strided_op<OP, SCOPE>(dst + off * stride, src + off, stride, len, peer);
      else strided_op<OP, SCOPE>(dst + off, src + off * stride, stride, len, peer);
    }
    if (OP == NB_OP_IPUT) nvshmem_quiet();  // a put ends delivered
  }
  stamp_end(st);
}

// Element i of buf (at i × buf_stride elements) holds the 8 pattern bytes
// of source element i × pat_stride.
__global__ void k_check_strided(const uint8_t *buf, int64_t n, int64_t buf_stride, int64_t pat_stride, int pe, int64_t seed,
                                unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    for (int b = 0; b < 8; b++)
      if (buf[i * buf_stride * 8 + b] != pat(i * pat_stride * 8 + b, pe, seed)) {
        mismatch(cnt, i);
        break;
      }
}

static int64_t strided_elems(const Args *a) { return a->size / 8; }
// The strided side's bytes: the elements and their gaps.
static int64_t strided_span(const Args *a) { return (strided_elems(a) - 1) * a->stride * 8 + 8; }

static int strided_validate(Run *r) {
  const Args *a = r->a;
  pair_roles(r, 0);
  if (a->size <= 0 || a->size % 8) return fail(NB_ERR, "size %lld is not a positive multiple of the 8-byte element", (long long)a->size);
  if (a->stride < 1) return fail(NB_ERR, "stride %d: want at least 1", a->stride);
  if (strided_span(a) > S.buf) return fail(NB_ERR, "%lld bytes at stride %d span %lld bytes, above the %lld-byte buffer", (long long)a->size, a->stride,
                                           (long long)strided_span(a), (long long)S.buf);
  if (a->ctas <= 0 || a->threads <= 0 || a->threads > 1024) return fail(NB_ERR, "launch %d x %d is invalid", a->ctas, a->threads);
  if (a->scope == NB_SCOPE_WARP && a->threads % 32) return fail(NB_ERR, "warp scope needs whole warps");
  if (r->initiator && nvshmem_ptr(S.dst, r->target) == nullptr)
    return fail(NB_UNREACHABLE, "PE %d is not reachable by load/store from PE %d: NVSHMEM's strided calls need a P2P mapping", r->target, S.me);
  return 0;
}

// The source: contiguous for a put, the strided span for a get (its every
// stride-th element is read).
static int strided_prepare(Run *r) {
  const Args *a = r->a;
  int rc = fill_src(a->op == NB_OP_IGET ? strided_span(a) : a->size, a->seed);
  if (!rc && a->verify) rc = poison_dst(a->op == NB_OP_IPUT ? strided_span(a) : a->size);
  return rc;
}

static int64_t strided_bytes(Run *r) { return r->initiator ? r->a->size : 0; }
static int64_t strided_work_set(Run *r) { return wave_share(r, strided_span(r->a)); }

template <int OP>
static int launch_strided(Run *r, int iters) {
  const Args *a = r->a;
  with_scope(a->scope, [&](auto sc) {
    auto k = k_strided<OP, decltype(sc)::value>;
    launched(r, k, a->ctas, a->threads);
    k<<<a->ctas, a->threads, 0, S.stream>>>((uint64_t *)S.dst, (const uint64_t *)S.src, strided_elems(a), a->stride, iters, r->target, S.times);
  });
  CKLAUNCH("strided kernel");
  return 0;
}

// The checks: a put's elements at every stride-th slot of the target's
// destination, a get's contiguous at the initiator; each element the
// pattern of its source element. corrupt damages an element's first byte
// (a gap of a strided destination is never read).
static int strided_verify(Run *r, nb_result *res, int get) {
  const Args *a = r->a;
  int from = get ? rma_get_from(r) : rma_put_from(r);
  if (from < 0) return 0;
  int64_t n = strided_elems(a), bs = get ? 1 : a->stride, ps = get ? a->stride : 1;
  return counted(
      n, res, [&](unsigned long long *cnt) { k_check_strided<<<1024, 256, 0, S.stream>>>(S.dst, n, bs, ps, from, a->seed, cnt); },
      [&](unsigned long long first, unsigned long long wrong) {
        snprintf(res->detail, sizeof res->detail, "element %llu (and %llu in all) not the pattern of PE %d's element %llu", first, wrong - 1, from,
                 first * (unsigned long long)ps);
      });
}
static int strided_corrupt(Run *r, int get) {
  int from = get ? rma_get_from(r) : rma_put_from(r);
  if (from < 0) return 0;
  int64_t i = strided_elems(r->a) / 2;
  return corrupt_region(region(S.dst + i * (get ? 1 : r->a->stride) * 8, 1, 1));
}
static int iput_verify(Run *r, nb_result *res) { return strided_verify(r, res, 0); }
static int iget_verify(Run *r, nb_result *res) { return strided_verify(r, res, 1); }
static int iput_corrupt(Run *r) { return strided_corrupt(r, 0); }
static int iget_corrupt(Run *r) { return strided_corrupt(r, 1); }
static constexpr Check kCheckIput = {"every element at its stride in the target, the initiator's pattern", iput_verify, iput_corrupt};
static constexpr Check kCheckIget = {"every strided element of the target, contiguous at the initiator", iget_verify, iget_corrupt};

static constexpr Family kStrided = {.name = "strided",
                                    .validate = strided_validate,
                                    .active = rma_active,
                                    .synced = rma_synced,
                                    .cal_iters = 1,
                                    .prepare = strided_prepare,
                                    .bytes = strided_bytes,
                                    .work_set = strided_work_set};
NB_FAMILY(kStrided);

static constexpr OpEntry kStridedOps[] = {
    {NB_OP_IPUT, "rma.iput", &kStrided, T_PAYLOAD | T_LOADSTORE, kCheckIput, launch_strided<NB_OP_IPUT>},
    {NB_OP_IGET, "rma.iget", &kStrided, T_PAYLOAD | T_LOADSTORE, kCheckIget, launch_strided<NB_OP_IGET>},
};
NB_CHECKED(kStridedOps);
