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
// Every PE makes the same calls in the same order (they are collective).
// The checks make one more of the call under test and use what it gives: a
// buffer written and read back whole, a team of every PE with this PE at
// its place.

enum {
  NB_OP_HEAP_MALLOC = 70,
  NB_OP_HEAP_CALLOC = 71,
  NB_OP_HEAP_ALIGN = 72,
  NB_OP_TEAM_SPLIT = 73,
};

enum { NB_HEAP_ALIGN = 4096 };

template <int OP>
static void *heap_alloc(size_t n) {
  if constexpr (OP == NB_OP_HEAP_MALLOC) return nvshmem_malloc(n);
  else if constexpr (OP == NB_OP_HEAP_CALLOC) return nvshmem_calloc(1, n);
  else if constexpr (OP == NB_OP_HEAP_ALIGN) return nvshmem_align(NB_HEAP_ALIGN, n);
  else static_assert(unhandled<OP>, "a heap call without a branch");
}

static int team_of_all(nvshmem_team_t *t) { return nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, S.npes, nullptr, 0, t); }

template <int OP>
static int launch_host(Run *r, int iters) {
  for (int i = 0; i < iters; i++) {
    if constexpr (OP == NB_OP_TEAM_SPLIT) {
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
  r->initiator = S.me == 0;
  r->target = r->initiator ? a->peer : 0;
  if (a->op != NB_OP_TEAM_SPLIT && (a->size <= 0 || a->size > S.buf))
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
  if (!rc) {
    k_fill<<<1024, 256, 0, S.stream>>>(p, n, S.me, r->a->seed);
    if (cudaGetLastError() != cudaSuccess) rc = fail(NB_ERR, "heap check: fill");
  }
  if (!rc && corrupt && OP == NB_OP_HEAP_MALLOC) rc = corrupt_region(region(p, n, 1));
  if (!rc) rc = check_bytes(p, n, 0, S.me, r->a->seed, res);
  cudaError_t e = cudaStreamSynchronize(S.stream);
  if (!rc && e != cudaSuccess) rc = fail(NB_ERR, "heap check: %s", cudaGetErrorString(e));
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

static constexpr Check kCheckMalloc = {"one more allocation written and read back whole", heap_verify<NB_OP_HEAP_MALLOC>, host_corrupt};
static constexpr Check kCheckCalloc = {"one more allocation zero, then written and read back whole", heap_verify<NB_OP_HEAP_CALLOC>, host_corrupt};
static constexpr Check kCheckAlign = {"one more allocation aligned, then written and read back whole", heap_verify<NB_OP_HEAP_ALIGN>, host_corrupt};
static constexpr Check kCheckTeam = {"one more split: a team of every PE, this PE at its place", team_verify, host_corrupt};

// Host calls: ten a launch calibrate the count; no kernel of ours.
static const Family kHost = {"host calls", host_validate, host_active, host_synced, 10, 0, 0, host_prepare, nullptr, nullptr,
                             host_bytes, host_work_set};

static constexpr OpEntry kHostOps[] = {
    {NB_OP_HEAP_MALLOC, "host.malloc", &kHost, T_HOST, kCheckMalloc, launch_host<NB_OP_HEAP_MALLOC>},
    {NB_OP_HEAP_CALLOC, "host.calloc", &kHost, T_HOST, kCheckCalloc, launch_host<NB_OP_HEAP_CALLOC>},
    {NB_OP_HEAP_ALIGN, "host.align", &kHost, T_HOST, kCheckAlign, launch_host<NB_OP_HEAP_ALIGN>},
    {NB_OP_TEAM_SPLIT, "host.team_split", &kHost, T_HOST, kCheckTeam, launch_host<NB_OP_TEAM_SPLIT>},
};
NB_CHECKED(kHostOps);
