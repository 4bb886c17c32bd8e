// host.cuh: host calls of NVSHMEM's API, collective over every PE, each
// iteration one call (or an allocation and its free) made from the host
// between the launch's events: with the stream idle, the events time the
// host's calls (no kernel of ours: no in-kernel stamps). The groups the
// paper's Table I opens with:
//   host.malloc      nvshmem_malloc(size) + nvshmem_free: the symmetric
//                    heap's allocation of a reused block
//   host.calloc      nvshmem_calloc(1, size) + nvshmem_free (zeroed)
//   host.align       nvshmem_align(4096, size) + nvshmem_free
//   host.team_split  nvshmem_team_split_strided of every PE of
//                    NVSHMEM_TEAM_WORLD + nvshmem_team_destroy
//   host.team_split_2d  nvshmem_team_split_2d of NVSHMEM_TEAM_WORLD into
//                    rows of 2 PEs (x teams) and their columns (y teams;
//                    one PE: a row of 1) + nvshmem_team_destroy of both
// Every PE makes the same calls in the same order (they are collective).
// The checks make one more of the call under test and use what it gives: a
// buffer written and read back whole, a team of every PE with this PE at
// its place.

enum {
  NB_OP_HEAP_MALLOC = 70,
  NB_OP_HEAP_CALLOC = 71,
  NB_OP_HEAP_ALIGN = 72,
  NB_OP_TEAM_SPLIT = 73,
  NB_OP_TEAM_SPLIT_2D = 133,
};

enum { NB_HEAP_ALIGN = 4096 };

template <int OP>
static void *heap_alloc(size_t n) {
  if constexpr (OP == NB_OP_HEAP_MALLOC) return nvshmem_malloc(n);
  else if constexpr (OP == NB_OP_HEAP_CALLOC) return nvshmem_calloc(1, n);
  else if constexpr (OP == NB_OP_HEAP_ALIGN) return nvshmem_align(NB_HEAP_ALIGN, n);
  else static_assert(unhandled<OP>, "a heap call without a branch");
}

// The 2D split's rows: 2 PEs a row (1 with one PE); NVSHMEM's x team is
// this PE's row, its y team the PEs at its place in every row.
static int split_2d_xrange() { return S.npes > 1 ? 2 : 1; }
static int team_split_2d(nvshmem_team_t *x, nvshmem_team_t *y) {
  return nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, split_2d_xrange(), nullptr, 0, x, nullptr, 0, y);
}

template <int OP>
static int launch_host(Run *r, int iters) {
  for (int i = 0; i < iters; i++) {
    if constexpr (OP == NB_OP_TEAM_SPLIT_2D) {
      nvshmem_team_t x = NVSHMEM_TEAM_INVALID, y = NVSHMEM_TEAM_INVALID;
      if (team_split_2d(&x, &y) != 0 || x == NVSHMEM_TEAM_INVALID || y == NVSHMEM_TEAM_INVALID)
        return fail(NB_ERR, "nvshmem_team_split_2d of every PE failed");
      nvshmem_team_destroy(x);
      nvshmem_team_destroy(y);
    } else if constexpr (OP == NB_OP_TEAM_SPLIT) {
      nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
      if (team_of_all(&t) != 0 || t == NVSHMEM_TEAM_INVALID) return fail(NB_ERR, "nvshmem_team_split_strided of every PE failed");
      nvshmem_team_destroy(t);
    } else {
      void *p = heap_alloc<OP>((size_t)r->a->size);
      if (!p) return fail(NB_ERR, "%s of %lld bytes returned NULL (the symmetric heap is full?)", r->e->name, (long long)r->a->size);
      nvshmem_free(p);
    }
  }
  return 0;
}

static int host_validate(Run *r) {
  const Args *a = r->a;
  r->initiator = S.me == a->initiator;
  r->target = r->initiator ? a->peer : a->initiator;
  if (a->op != NB_OP_TEAM_SPLIT && a->op != NB_OP_TEAM_SPLIT_2D && (a->size <= 0 || a->size > S.buf))
    return fail(NB_ERR, "allocation of %lld bytes outside 1..%lld", (long long)a->size, (long long)S.buf);
  return 0;
}
static int host_active(Run *) { return 1; }  // collective: every PE
static int host_synced(Run *) { return 1; }
static int host_prepare(Run *) { return 0; }
static int64_t host_bytes(Run *) { return 0; }
static int64_t host_work_set(Run *) { return 0; }

// calloc's bytes are zero.
static int check_bytes_zero(const uint8_t *p, int64_t n, nb_result *res) {
  return counted(
      n, res, [&](unsigned long long *cnt) { k_check_words<uint8_t><<<1024, 256, 0, S.stream>>>(p, n, (uint8_t)0, cnt); },
      [&](unsigned long long first, unsigned long long wrong) {
        snprintf(res->detail, sizeof res->detail, "byte %llu of nvshmem_calloc's buffer is not zero (%llu in all)", first, wrong);
      });
}

// The checks make one more call of the operation and use what it returns;
// the corrupt flag damages what they read (a byte read back, the team's
// size as seen), so a check that did not look would pass.
static int g_host_corrupt;
static int host_corrupt(Run *) {
  g_host_corrupt = 1;
  return 0;
}

// The tail of the heap checks: unless rc says the check already failed,
// the block p of n bytes written with this PE's pattern (then damaged,
// where corrupt) and read back whole; the stream synchronised whatever
// happened. rc, or the first failure here.
static int heap_readback(Run *r, int rc, uint8_t *p, int64_t n, int corrupt, nb_result *res) {
  if (!rc) {
    k_fill<<<1024, 256, 0, S.stream>>>(p, n, S.me, r->a->seed);
    if (cudaGetLastError() != cudaSuccess) rc = fail(NB_ERR, "heap check: fill");
  }
  if (!rc && corrupt) rc = corrupt_region(region(p, n, 1));
  if (!rc) rc = check_bytes(p, n, 0, S.me, r->a->seed, res);
  cudaError_t e = cudaStreamSynchronize(S.stream);
  if (!rc && e != cudaSuccess) rc = fail(NB_ERR, "heap check: %s", cudaGetErrorString(e));
  return rc;
}

template <int OP>
static int heap_verify(Run *r, nb_result *res) {
  int64_t n = r->a->size;
  int corrupt = g_host_corrupt;
  g_host_corrupt = 0;
  uint8_t *p = (uint8_t *)heap_alloc<OP>((size_t)n);  // collective: every PE
  int rc = 0;
  if (!p) rc = fail(NB_ERR, "%s of %lld bytes returned NULL in the check", r->e->name, (long long)n);
  // Each part of the check is what corrupt damages for its call: calloc's
  // zeroes, align's alignment, malloc's buffer read back.
  if (!rc && OP == NB_OP_HEAP_CALLOC) {
    if (corrupt) rc = corrupt_region(region(p, n, 1));
    if (!rc) rc = check_bytes_zero(p, n, res);  // calloc's bytes are zero
  }
  if (!rc && OP == NB_OP_HEAP_ALIGN) {
    uintptr_t at = (uintptr_t)p + (corrupt ? 1 : 0);
    res->checked++;
    if (at % NB_HEAP_ALIGN) {
      res->errors++;
      snprintf(res->detail, sizeof res->detail, "nvshmem_align(%d) returned %p", NB_HEAP_ALIGN, (void *)at);
    }
  }
  rc = heap_readback(r, rc, p, n, corrupt && OP == NB_OP_HEAP_MALLOC, res);
  if (p) nvshmem_free(p);  // collective: every PE that allocated, whatever was found
  return rc;
}

static int team_verify(Run *, nb_result *res) {
  nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
  if (team_of_all(&t) != 0 || t == NVSHMEM_TEAM_INVALID) return fail(NB_ERR, "nvshmem_team_split_strided failed in the check");
  int n = nvshmem_team_n_pes(t), me = nvshmem_team_my_pe(t);
  if (g_host_corrupt) n++;
  g_host_corrupt = 0;
  res->checked += 2;
  if (n != S.npes || me != S.me) {
    res->errors += (n != S.npes) + (me != S.me);
    snprintf(res->detail, sizeof res->detail, "the team of every PE has %d PEs and this PE at %d: want %d and %d", n, me, S.npes, S.me);
  }
  nvshmem_team_destroy(t);
  return 0;
}

// The 2D split's teams: this PE's row (x: its place in the row, the row's
// PEs) and column (y: its row's index, the rows that reach its place).
static int team_2d_verify(Run *, nb_result *res) {
  nvshmem_team_t x = NVSHMEM_TEAM_INVALID, y = NVSHMEM_TEAM_INVALID;
  if (team_split_2d(&x, &y) != 0 || x == NVSHMEM_TEAM_INVALID || y == NVSHMEM_TEAM_INVALID)
    return fail(NB_ERR, "nvshmem_team_split_2d failed in the check");
  int xr = split_2d_xrange(), row = S.me / xr, col = S.me % xr;
  int want[4] = {S.npes - row * xr < xr ? S.npes - row * xr : xr, col, (S.npes - col + xr - 1) / xr, row};
  int got[4] = {nvshmem_team_n_pes(x), nvshmem_team_my_pe(x), nvshmem_team_n_pes(y), nvshmem_team_my_pe(y)};
  if (g_host_corrupt) got[0]++;
  g_host_corrupt = 0;
  for (int i = 0; i < 4; i++) {
    res->checked++;
    if (got[i] != want[i]) {
      res->errors++;
      snprintf(res->detail, sizeof res->detail, "split_2d (rows of %d): x team %d PEs, this PE at %d; y team %d PEs, at %d: want %d, %d, %d, %d", xr,
               got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
    }
  }
  nvshmem_team_destroy(x);
  nvshmem_team_destroy(y);
  return 0;
}

static constexpr Check kCheckMalloc = {"one more allocation written and read back whole", heap_verify<NB_OP_HEAP_MALLOC>, host_corrupt};
static constexpr Check kCheckCalloc = {"one more allocation zero, then written and read back whole", heap_verify<NB_OP_HEAP_CALLOC>, host_corrupt};
static constexpr Check kCheckAlign = {"one more allocation aligned, then written and read back whole", heap_verify<NB_OP_HEAP_ALIGN>, host_corrupt};
static constexpr Check kCheckTeam = {"one more split: a team of every PE, this PE at its place", team_verify, host_corrupt};
static constexpr Check kCheckTeam2D = {"one more split: this PE's row and column teams, their sizes and its places", team_2d_verify, host_corrupt};

// Host calls: ten a launch calibrate the count; no kernel of ours.
static constexpr Family kHost = {.name = "host calls",
                                 .validate = host_validate,
                                 .active = host_active,
                                 .synced = host_synced,
                                 .cal_iters = 10,
                                 .prepare = host_prepare,
                                 .bytes = host_bytes,
                                 .work_set = host_work_set};
NB_FAMILY(kHost);

static constexpr OpEntry kHostOps[] = {
    {NB_OP_HEAP_MALLOC, "host.malloc", &kHost, T_HOST, kCheckMalloc, launch_host<NB_OP_HEAP_MALLOC>},
    {NB_OP_HEAP_CALLOC, "host.calloc", &kHost, T_HOST, kCheckCalloc, launch_host<NB_OP_HEAP_CALLOC>},
    {NB_OP_HEAP_ALIGN, "host.align", &kHost, T_HOST, kCheckAlign, launch_host<NB_OP_HEAP_ALIGN>},
    {NB_OP_TEAM_SPLIT, "host.team_split", &kHost, T_HOST, kCheckTeam, launch_host<NB_OP_TEAM_SPLIT>},
    {NB_OP_TEAM_SPLIT_2D, "host.team_split_2d", &kHost, T_HOST, kCheckTeam2D, launch_host<NB_OP_TEAM_SPLIT_2D>},
};
NB_CHECKED(kHostOps);

// ---------------------------------------------------------------------------
// The symmetric heap's growth. NVSHMEM's heap on a GPU with CUDA VMM (the
// usual case: NVSHMEM_DISABLE_CUDA_VMM unset) reserves address space for
// NVSHMEM_MAX_MEMORY_PER_GPU at nvshmem_init and commits physical memory
// on demand (NVSHMEM's src/host/mem/mem_heap.cpp,
// nvshmemi_symmetric_heap_vidmem_dynamic_vmm::allocate_symmetric_memory):
// an allocation its allocator (custom_malloc.cpp's mspace, metadata kept on
// the host) cannot place in the memory already committed makes
// allocate_physical_memory_to_heap commit size + alignment rounded up to
// NVSHMEM_CUMEM_GRANULARITY (cuMemCreate, cuMemMap, the handle exchanged
// with and mapped by every PE, the device state updated), then places it.
// Nothing is ever uncommitted: nvshmem_free returns a block to the
// allocator only, so the next allocation that fits reuses it.
//   host.heap_grow   nvshmem_malloc(size), kept: each allocation lies past
//                    every block this row allocated before (none is freed,
//                    not even at the point's end, so a later point cannot
//                    reuse them); with the granularity at most the size
//                    (the suite runs it with NVSHMEM_CUMEM_GRANULARITY of
//                    2 MiB, sizes of 2 MiB and up) nothing committed is
//                    left to place it in, so every call commits memory.
//                    One call a launch (no calibration), so the samples are
//                    calls, each one growth.
//   host.heap_reuse  nvshmem_free of the block the last call allocated +
//                    nvshmem_malloc(size) of the same size: the allocator
//                    hands back the block just freed (memory already
//                    committed and mapped); one malloc a call like the
//                    growth row, plus the free (itself collective), which
//                    the growth row does not pay.
// Checked: one more call of the row, its block past every earlier block of
// the growth row (resp. the same block as the one freed, a reuse), then
// written and read back whole.
enum { NB_OP_HEAP_GROW = 131, NB_OP_HEAP_REUSE = 132 };

static uintptr_t g_grow_end;      // the end of the growth row's furthest block
static void *g_reuse_block;       // the reuse row's block (freed by the next call)

static int heap_grow_one(Run *r, uint8_t **out) {
  size_t n = (size_t)r->a->size;
  uint8_t *p = nullptr;
  if (r->e->op == NB_OP_HEAP_GROW) {
    p = (uint8_t *)nvshmem_malloc(n);
    if (p && (uintptr_t)p + n > g_grow_end) g_grow_end = (uintptr_t)p + n;
  } else {
    if (g_reuse_block) nvshmem_free(g_reuse_block);
    p = (uint8_t *)(g_reuse_block = nvshmem_malloc(n));
  }
  if (!p) return fail(NB_ERR, "%s of %lld bytes returned NULL (NVSHMEM_MAX_MEMORY_PER_GPU reached, or the GPU full?)", r->e->name, (long long)n);
  if (out) *out = p;
  return 0;
}

static int launch_heap_grow(Run *r, int iters) {
  for (int i = 0; i < iters; i++)
    if (int rc = heap_grow_one(r, nullptr)) return rc;
  return 0;
}

static int heap_grow_verify(Run *r, nb_result *res) {
  int64_t n = r->a->size;
  int corrupt = g_host_corrupt;
  g_host_corrupt = 0;
  uintptr_t end = g_grow_end;
  void *held = g_reuse_block;
  uint8_t *p = nullptr;
  int rc = heap_grow_one(r, &p);  // collective: every PE
  if (!rc) {
    res->checked++;
    bool grew = r->e->op == NB_OP_HEAP_GROW;
    if (grew ? (uintptr_t)p < end : (void *)p != held) {
      res->errors++;
      snprintf(res->detail, sizeof res->detail, grew ? "nvshmem_malloc returned %p, inside the blocks allocated before (they end at %p): not a growth"
                                                     : "nvshmem_malloc returned %p, not the block %p just freed: not a reuse",
               (void *)p, grew ? (void *)end : held);
    }
  }
  rc = heap_readback(r, rc, p, n, corrupt, res);
  if (g_reuse_block && r->e->op == NB_OP_HEAP_REUSE) {  // the point's last block; the growth row's stay
    nvshmem_free(g_reuse_block);                          // collective: every PE holds one
    g_reuse_block = nullptr;
  }
  return rc;
}

// One call a launch, no calibration: every sample is one call, and each
// growth call commits memory for good.
static constexpr Family kHeapGrow = {.name = "heap growth",
                                     .validate = host_validate,
                                     .active = host_active,
                                     .synced = host_synced,
                                     .default_iters = 1,
                                     .prepare = host_prepare,
                                     .bytes = host_bytes,
                                     .work_set = host_work_set};
NB_FAMILY(kHeapGrow);

static constexpr Check kCheckGrow = {"one more allocation past every earlier one of the row, written and read back whole", heap_grow_verify,
                                     host_corrupt};
static constexpr Check kCheckReuse = {"one more allocation, the block just freed, written and read back whole", heap_grow_verify, host_corrupt};

static constexpr OpEntry kHeapGrowOps[] = {
    {NB_OP_HEAP_GROW, "host.heap_grow", &kHeapGrow, T_HOST, kCheckGrow, launch_heap_grow},
    {NB_OP_HEAP_REUSE, "host.heap_reuse", &kHeapGrow, T_HOST, kCheckReuse, launch_heap_grow},
};
NB_CHECKED(kHeapGrowOps);
