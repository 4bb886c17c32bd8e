// newer.cuh: rows only newer libraries have, compiled where the headers the
// shim is built against have them (their version macros, never a run-time
// guess) and waived, with the version they need, where not.
//   lat.flush  one thread: an 8-byte putmem_nbi, then nvshmemx_flush (the
//              source is reusable; NVSHMEM 3.7 and later), per iteration:
//              issue time, not a round trip (one quiet ends the launch).
//   rma.put_tma, rma.get_tma
//              bulk putmem_nbi / getmem_nbi at block scope, the bulk
//              kernel's loop (rma.cuh's bulk_loop) in a kernel whose CTAs
//              give NVSHMEM shared memory (nvshmemx_give_smem, the amount
//              nvshmemx_ask_smem recommends) and take it back at the end
//              (nvshmemx_release_smem): NVSHMEM 3.7 and later route a put
//              or get over NVLink P2P through TMA copies when
//              NVSHMEM_TMA_POLICY (read at nvshmem_init: the point's own
//              environment) is ENABLE and the CTA gave shared memory, the
//              pointers and size 16-byte aligned (the chunks are); with
//              DISABLE, NVSHMEM's default, the same kernel copies with
//              load/store, so the two policies are one kernel, like for like.
//   rma.rate_put_region
//              the block-scope burst of rma.rate_put (rate.cuh's
//              rate_put_burst: every CTA's own 8-byte putmem_nbi_block,
//              iters of them, one quiet), inside an RMA region of the CTA
//              with NVSHMEM's BATCH_RMA hint (NVSHMEM 3.8 and later):
//              region_start_block, the burst, region_stop_block, quiet.
//              What the calls do (3.8.0's headers: device/nvshmemx_defines.h,
//              non_abi/device/common/nvshmemi_region_{device,state}.cuh,
//              pt-to-pt/{transfer,proxy,ibgda}_device.cuh):
//              start: a CTA barrier; thread 0 claims a slot of a device-wide
//              table keyed by (grid, CTA) (a probe of up to 8 slots, a CAS,
//              a few stores; NVSHMEM_REGION_MAX_SLOTS, default 4096) and,
//              with a hint, raises a device-wide count of active regions
//              under a CAS lock; the handle goes to every thread through
//              shared memory; barriers. stop: a barrier; thread 0 finds the
//              slot again and, with the hint, ends the batch on the
//              transport (IBGDA / GPUNetIO: rings the doorbells of the
//              queue pairs whose submissions the region deferred; the CPU
//              proxy, where it runs in full: a REGION_END request in its
//              channel), frees the slot, lowers the count; barriers.
//              Between them: a put_nbi to a peer this PE reaches by
//              load/store (NVLink P2P, its own GPU) copies with loads and
//              stores (or TMA) as outside a region: the hint changes
//              nothing there. To a peer over a remote transport, while any
//              hinted region is active on the GPU, every nbi put or get
//              looks its CTA's region up: IBGDA posts its work request but
//              defers the doorbell to the region's end (or every
//              NVSHMEM_IBGDA_NUM_REQUESTS_IN_BATCH requests, or
//              NVSHMEM_REGION_DEVICE_BATCH_THRESHOLD operations where set);
//              the proxy path tags each request with the region for the
//              proxy to batch until its REGION_END. A quiet, fence,
//              blocking call or AMO inside a region ends its batch first.
//              Each CTA counts its regions that started and stopped with
//              NVSHMEMX_SUCCESS (checked: one a launch), so a region that
//              failed to start cannot pass for one measured.
//   rma.rate_put_region_none
//              the same kernel with the region calls skipped (a launch
//              argument; checked: no region counted): the burst without a
//              region, like for like. Not rma.rate_put's kernel: compiled
//              apart, ptxas may schedule its loop otherwise (the peer's
//              heap-base load after the CTA barrier, not before it: its
//              latency on every call's path), a difference of code shape
//              that would read as the region's.
//   lat.region an empty region: region_start_block + region_stop_block
//              with the BATCH_RMA hint, nothing inside, per iteration, one
//              CTA: what a region adds to a burst (an issue time). Thread 0
//              counts the pairs that returned NVSHMEMX_SUCCESS (checked: one
//              an iteration).
//   rma.put_signal_counted
//              nvshmemx_putmem_signal_counted_nbi_block: NVSHMEM 3.8.0
//              declares it (and nvshmemx_signal_counted_wait_until) only
//              #if defined(NVSHMEM_CFT_HANDLES_SUPPORT) (host/nvshmemx_api.h,
//              device/nvshmemx_defines.h), which the PyPI 3.8.0 build
//              leaves undefined (non_abi/nvshmem_build_options.h); where
//              defined, the counted path also needs __CUDA_ARCH__ >= 1000
//              and CUDART >= 13030 (LE_HW_SW_REQUIREMENTS_MET,
//              device_host/logical_endpoint_types.h), NVSHMEM_TMA_POLICY
//              ENABLE, a CTA that gave shared memory and a fabric
//              endpoint of the peer, else it returns
//              NVSHMEMX_ERROR_NOT_SUPPORTED (counted_device.cuh). No
//              library we build against declares it, so no kernel: a body
//              never compiled would not be one we could call correct. The
//              row is listed and waived at validate with that reason.

#define NB_NVSHMEM_VERSION (NVSHMEM_VENDOR_MAJOR_VERSION * 100 + NVSHMEM_VENDOR_MINOR_VERSION)
#define NB_HAS_NVSHMEM_FLUSH (NB_NVSHMEM_VERSION >= 307)
#define NB_HAS_NVSHMEM_TMA (NB_NVSHMEM_VERSION >= 307)  // nvshmemx_give_smem, NVSHMEM_TMA_POLICY (3.7.0's headers)
// RMA regions: 3.8.0's device_host/nvshmem_types.h defines the attributes'
// initializer beside nvshmemx_region_attrs_t and the hints (the region
// calls come with them); older headers have none of it.
#if defined(NVSHMEMX_REGION_ATTRS_INITIALIZER)
#define NB_HAS_NVSHMEM_REGION 1
#else
#define NB_HAS_NVSHMEM_REGION 0
#endif

enum {
  NB_OP_LAT_FLUSH = 76,
  NB_OP_PUT_TMA = 160,
  NB_OP_GET_TMA = 161,
  NB_OP_RATE_PUT_REGION = 180,
  NB_OP_LAT_REGION = 181,
  NB_OP_PUT_SIGNAL_COUNTED = 182,
  NB_OP_RATE_PUT_REGION_NONE = 183,
};

// A row of NVSHMEM major.minor or later on a shim whose headers are older:
// waived with what it needs (in validate, before anything runs; a launch's
// branch for the same case is never reached).
static int needs_nvshmem(int major, int minor, bool has, const char *what) {
  if (has) return 0;
  return fail(NB_UNREACHABLE, "needs NVSHMEM >= %d.%d (%s): this shim was built against NVSHMEM %d.%d", major, minor, what,
              NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
}
static int needs_nvshmem_37(bool has, const char *what) { return needs_nvshmem(3, 7, has, what); }
static int needs_nvshmem_38(bool has, const char *what) { return needs_nvshmem(3, 8, has, what); }

// The counted-signal row's waiver, on every library: see the top.
static int counted_waiver(void) {
#if defined(NVSHMEM_CFT_HANDLES_SUPPORT)
  return fail(NB_UNREACHABLE,
              "no counted-signal kernel in nvshbench yet: this NVSHMEM %d.%d was built with NVSHMEM_CFT_HANDLES_SUPPORT, but its counted "
              "path (sm_100 or later, CUDA >= 13.3, NVSHMEM_TMA_POLICY=ENABLE, a fabric endpoint) was never available to test one",
              NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
#else
  return fail(NB_UNREACHABLE,
              "needs NVSHMEM >= 3.8 built with NVSHMEM_CFT_HANDLES_SUPPORT (nvshmemx_putmem_signal_counted_nbi_block is declared only "
              "there; the PyPI 3.8.0 wheel is built without it): this shim was built against NVSHMEM %d.%d without it",
              NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
#endif
}

#if NB_HAS_NVSHMEM_FLUSH
__global__ void k_lat_flush(uint8_t *dst, const uint8_t *src, int iters, int peer, int64_t *times) {
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    nvshmem_putmem_nbi(dst, src, 8, peer);
    nvshmemx_flush();
  }
  stamp(times, iters);
  nvshmem_quiet();  // delivered, for the check
}
#endif

#if NB_HAS_NVSHMEM_TMA
template <int OP>
__global__ void k_bulk_tma(uint8_t *dst, const uint8_t *src, int64_t size, int iters, int peer, int smem, int64_t *st) {
  // NVSHMEM's TMA staging from a TMA_ALIGN line (tma_aligned, common.cuh).
  extern __shared__ __align__(16) uint8_t tma_smem[];
  nvshmemx_give_smem(tma_aligned(tma_smem), smem);
  bulk_loop<OP, NB_SCOPE_BLOCK, 0>(dst, src, size, iters, peer, nullptr, st);
  nvshmemx_release_smem();
}
#endif

#if NB_HAS_NVSHMEM_REGION
// Starts a region of this CTA with the BATCH_RMA hint. Both region calls
// are the CTA's (every thread calls them) and return the same status on
// every thread of it.
__device__ static inline int region_start(nvshmemx_region_handle_t *h) {
  nvshmemx_region_attrs_t attrs = NVSHMEMX_REGION_ATTRS_INITIALIZER;
  attrs.hints = NVSHMEMX_REGION_HINT_BATCH_RMA;
  return nvshmemx_region_start_block(h, &attrs);
}

// rma.rate_put_region(_none): the rate's burst inside a region, or with
// open 0 the same code without one (regions: a count a CTA, raised when its
// region started and stopped). open is a launch argument, not a template
// parameter: one compiled loop for both points.
__global__ void k_rate_put_region(uint8_t *dst, const uint8_t *src, int iters, int peer, int open, uint64_t *regions, int64_t *st) {
  nvshmemx_region_handle_t h = 0;
  stamp_begin(st);
  int rc = open ? region_start(&h) : NVSHMEMX_SUCCESS;
  rate_put_burst<NB_SCOPE_BLOCK>(dst, src, iters, peer);
  if (open) {
    if (rc == NVSHMEMX_SUCCESS) rc = nvshmemx_region_stop_block(h);
    if (threadIdx.x == 0 && rc == NVSHMEMX_SUCCESS) regions[blockIdx.x]++;
  }
  nvshmem_quiet();
  stamp_end(st);
}

// lat.region: empty regions (done: the pairs that succeeded, added once).
__global__ void k_lat_region(uint64_t *done, int iters, int64_t *times) {
  uint64_t ok = 0;
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    nvshmemx_region_handle_t h = 0;
    int rc = region_start(&h);
    if (rc == NVSHMEMX_SUCCESS) rc = nvshmemx_region_stop_block(h);
    ok += rc == NVSHMEMX_SUCCESS;
  }
  stamp(times, iters);
  if (threadIdx.x == 0) *done += ok;
}
#endif

// The RMA family's checks, with the version and the scope the TMA rows
// need; the counted-signal row's waiver.
static int newer_rma_validate(Run *r) {
  if (int rc = rma_validate(r)) return rc;
  if (r->a->op == NB_OP_PUT_SIGNAL_COUNTED) return counted_waiver();
  if (int rc = needs_nvshmem_37(NB_HAS_NVSHMEM_TMA, "nvshmemx_give_smem, NVSHMEM_TMA_POLICY")) return rc;
  if (r->a->scope != NB_SCOPE_BLOCK) return fail(NB_ERR, "%s runs at block scope (NVSHMEM's TMA path takes a CTA's shared memory)", r->e->name);
  if (r->a->threads < 64 || r->a->threads % 32)
    return fail(NB_ERR, "%s needs whole warps, two at least (NVSHMEM's TMA staging falls back to load/store below)", r->e->name);
  return 0;
}

template <int OP>
static int launch_bulk_tma(Run *r, int iters) {
#if NB_HAS_NVSHMEM_TMA
  const Args *a = r->a;
  int smem = nvshmemx_ask_smem(NVSHMEMX_SMEM_RECOMMENDED), dyn = smem + TMA_ALIGN;  // + tma_aligned's slack
  auto k = k_bulk_tma<OP>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
  launched(r, k, a->ctas, a->threads, dyn);
  k<<<a->ctas, a->threads, dyn, S.stream>>>(S.dst, S.src, a->size, iters, r->target, smem, S.times);
  CKLAUNCH("TMA bulk kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_37(false, r->e->name);
#endif
}

// Never reached: validate waives the row (see the top).
static int launch_put_signal_counted(Run *, int) { return counted_waiver(); }

static constexpr Family kNewerRMA = {.name = "newer libraries (rma)",
                                     .validate = newer_rma_validate,
                                     .active = rma_active,
                                     .synced = rma_synced,
                                     .cal_iters = 1,
                                     .prepare = rma_prepare,
                                     .bytes = rma_bytes,
                                     .work_set = rma_work_set};
NB_FAMILY(kNewerRMA);

// The latency family's checks, with the version the row needs.
static int newer_validate(Run *r) {
  if (int rc = lat_validate(r)) return rc;
  if (r->a->op == NB_OP_LAT_FLUSH) return needs_nvshmem_37(NB_HAS_NVSHMEM_FLUSH, "nvshmemx_flush");
  return 0;
}

static int launch_lat_flush(Run *r, int iters) {
#if NB_HAS_NVSHMEM_FLUSH
  k_lat_flush<<<1, 1, 0, S.stream>>>(S.dst, S.src, iters, r->target, S.times);
  CKLAUNCH("flush kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_37(false, r->e->name);
#endif
}

static constexpr Family kNewer = {.name = "newer libraries",
                                  .validate = newer_validate,
                                  .active = lat_active,
                                  .synced = lat_synced,
                                  .cal_iters = 10,
                                  .kernel_timer = 1,
                                  .prepare = lat_prepare,
                                  .before_launch = lat_before_launch,
                                  .bytes = lat_bytes,
                                  .work_set = lat_work_set};
NB_FAMILY(kNewer);

// --- regions
// The message rate's checks, with the version and the scope a region needs.
static int newer_rate_validate(Run *r) {
  if (int rc = rate_validate(r)) return rc;
  if (int rc = needs_nvshmem_38(NB_HAS_NVSHMEM_REGION, "nvshmemx_region_start_block")) return rc;
  if (r->a->scope != NB_SCOPE_BLOCK) return fail(NB_ERR, "%s runs at block scope (a region is a CTA's)", r->e->name);
  // NVSHMEM keys a region's slot by (grid, CTA) in a table of
  // NVSHMEMI_REGION_MAX_SLOTS_DEFAULT (4096 in 3.8.0) slots, probing
  // NVSHMEMI_REGION_SLOT_PROBE_LIMIT (8) from blockIdx.x: more CTAs than
  // slots collide, and a region that cannot start
  // (NVSHMEMX_ERROR_OUT_OF_MEMORY) would fail the point's count check.
#if defined(NVSHMEMI_REGION_MAX_SLOTS_DEFAULT)
  long slots = NVSHMEMI_REGION_MAX_SLOTS_DEFAULT;
#else
  long slots = 4096;
#endif
  if (r->a->op == NB_OP_RATE_PUT_REGION && r->a->ctas > slots)  // the burst without a region takes no slot
    return fail(NB_ERR, "%s: %d CTAs, more than NVSHMEM's %ld region slots (its default table)", r->e->name, r->a->ctas, slots);
  return 0;
}

// The CTAs' counts of regions, at the initiator.
static Region at_region_counts(Run *r) { return r->initiator ? region(S.scratch, r->a->ctas, 8) : nowhere(); }

static int newer_rate_prepare(Run *r) {
  if (int rc = rate_prepare(r)) return rc;
  k_zero_u64<<<1, 256, 0, S.stream>>>((uint64_t *)S.scratch, r->a->ctas);
  CKLAUNCH("region count reset");
  return 0;
}

// The rate's check (every CTA's message at its slot of the target) and, at
// the initiator, every CTA's count at the launches made: one region a CTA
// and launch started and stopped (none for the burst without a region).
static int messages_in_regions(Run *r, nb_result *res) {
  if (int rc = kCheckMessages.verify(r, res)) return rc;
  Region w = at_region_counts(r);
  uint64_t want = r->a->op == NB_OP_RATE_PUT_REGION ? (uint64_t)r->launches : 0;
  return w.p ? check_u64((const uint64_t *)w.p, w.n, want, res) : 0;
}
// Damages the counts alone: rma.rate_put's corruption proves the message
// check (the same check, kCheckMessages), and with the messages damaged as
// well a count check that never fired would go unseen.
static int messages_in_regions_corrupt(Run *r) {
  Region w = at_region_counts(r);
  return w.p ? corrupt_region(w) : 0;
}
static constexpr Check kCheckMessagesInRegions = {"every CTA's message at its slot of the target, and its region started and stopped once a launch "
                                                  "(none without a region)",
                                                  messages_in_regions, messages_in_regions_corrupt};

template <int OPEN>
static int launch_rate_put_region(Run *r, int iters) {
#if NB_HAS_NVSHMEM_REGION
  const Args *a = r->a;
  launched(r, k_rate_put_region, a->ctas, a->threads);
  k_rate_put_region<<<a->ctas, a->threads, 0, S.stream>>>(S.dst, S.src, iters, r->target, OPEN, (uint64_t *)S.scratch, S.times);
  CKLAUNCH("region message rate kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_38(false, r->e->name);
#endif
}

static constexpr Family kNewerRate = {.name = "newer libraries (message rate)",
                                      .validate = newer_rate_validate,
                                      .active = rma_active,
                                      .synced = rma_synced,
                                      .cal_iters = 1,
                                      .prepare = newer_rate_prepare,
                                      .bytes = rate_bytes,
                                      .work_set = rate_work_set};
NB_FAMILY(kNewerRate);

// The latency family's checks, with the version regions need.
static int newer_region_validate(Run *r) {
  if (int rc = lat_validate(r)) return rc;
  return needs_nvshmem_38(NB_HAS_NVSHMEM_REGION, "nvshmemx_region_start_block");
}

// The initiator's count of empty regions, zeroed once a point.
static int region_prepare(Run *r) {
  if (int rc = lat_prepare(r)) return rc;
  CK(cudaMemsetAsync(S.dst, 0, sizeof(uint64_t), S.stream));
  return 0;
}
static Region at_region_count(Run *r) { return r->initiator ? region(S.dst, 1, 8) : nowhere(); }
static int regions_at_iterations(Run *r, Region w, nb_result *res) { return check_u64((const uint64_t *)w.p, w.n, (uint64_t)r->ops, res); }
NB_CHECK(kCheckRegions, "the initiator's count of regions started and stopped at the iterations launched", at_region_count, regions_at_iterations);

static int launch_lat_region(Run *r, int iters) {
#if NB_HAS_NVSHMEM_REGION
  k_lat_region<<<1, r->a->threads, 0, S.stream>>>((uint64_t *)S.dst, iters, S.times);
  CKLAUNCH("region kernel");
  return 0;
#else
  (void)iters;
  return needs_nvshmem_38(false, r->e->name);
#endif
}

static constexpr Family kNewerRegion = {.name = "newer libraries (regions)",
                                        .validate = newer_region_validate,
                                        .active = lat_active,
                                        .synced = lat_synced,
                                        .cal_iters = 10,
                                        .kernel_timer = 1,
                                        .prepare = region_prepare,
                                        .before_launch = lat_before_launch,
                                        .bytes = lat_bytes,
                                        .work_set = lat_work_set};
NB_FAMILY(kNewerRegion);

static constexpr OpEntry kNewerOps[] = {
    {NB_OP_LAT_FLUSH, "lat.flush", &kNewer, T_PAYLOAD, kCheckAtPeer, launch_lat_flush},
    {NB_OP_PUT_TMA, "rma.put_tma", &kNewerRMA, T_PAYLOAD, kCheckPut, launch_bulk_tma<NB_OP_PUT>},
    {NB_OP_GET_TMA, "rma.get_tma", &kNewerRMA, T_PAYLOAD, kCheckGet, launch_bulk_tma<NB_OP_GET>},
    {NB_OP_RATE_PUT_REGION, "rma.rate_put_region", &kNewerRate, T_MESSAGES, kCheckMessagesInRegions, launch_rate_put_region<1>},
    {NB_OP_RATE_PUT_REGION_NONE, "rma.rate_put_region_none", &kNewerRate, T_MESSAGES, kCheckMessagesInRegions, launch_rate_put_region<0>},
    {NB_OP_LAT_REGION, "lat.region", &kNewerRegion, 0, kCheckRegions, launch_lat_region},
    // No kernel: waived on every library we build against (the top).
    {NB_OP_PUT_SIGNAL_COUNTED, "rma.put_signal_counted", &kNewerRMA, T_PAYLOAD, kCheckPut, launch_put_signal_counted},
};
NB_CHECKED(kNewerOps);
