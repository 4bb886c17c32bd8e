// exchange.cuh: the shim's two host-side collective primitives: exchange
// (every PE's bytes to every PE) and agree (every PE's status, verification
// counts and one value, on top of exchange). Every multi-PE step of nb_run
// and of the families' setups is made of these and NVSHMEM barriers.

// Exchanges: every PE puts its NB_SLOT-byte slot into every PE's copy of the
// exchange area, then all meet in a barrier. Two halves alternate, so a PE
// that runs ahead into the next exchange never overwrites a slot another PE
// is still reading (it cannot pass that PE's next barrier).
__global__ void k_xput(uint8_t *half, const uint8_t *mine, int len, int me, int npes) {
  for (int q = 0; q < npes; q++) nvshmem_putmem(half + (size_t)me * NB_SLOT, mine, len, q);
  nvshmem_quiet();
}

// exchange is collective: out[pe * len ...] gets every PE's len bytes. It
// makes its barrier even when this PE's part failed, and says so after.
static int exchange(const void *mine, int len, void *out) {
  uint8_t *half = S.xchg + (size_t)S.xhalf * NB_MAX_PES * NB_SLOT;
  S.xhalf ^= 1;
  int rc = 0;
  cudaError_t e = cudaMemcpy(S.stage, mine, len, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    k_xput<<<1, 1, 0, S.stream>>>(half, S.stage, len, S.me, S.npes);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(S.stream);
  }
  if (e != cudaSuccess) rc = fail(NB_ERR, "exchange: %s", cudaGetErrorString(e));
  nvshmem_barrier_all();
  if (rc) return rc;
  for (int q = 0; q < S.npes; q++) CK(cudaMemcpy((uint8_t *)out + (size_t)q * len, half + (size_t)q * NB_SLOT, len, cudaMemcpyDeviceToHost));
  return 0;
}

// gather is collective: every PE's len bytes (at most max) into out[pe *
// max ...], their lengths into lens, in rounds of one exchange slot (the
// lengths first, so every PE makes as many rounds as the longest needs). A
// PE whose bytes do not fit passes none and says so after.
static int gather(const uint8_t *mine, int64_t len, uint8_t *out, int64_t max, int64_t *lens) {
  int rc = 0;
  if (len < 0 || len > max) {
    rc = fail(NB_ERR, "gather: %lld bytes, at most %lld", (long long)len, (long long)max);
    len = 0;
  }
  int64_t all[NB_MAX_PES];
  if (int e = exchange(&len, sizeof len, all)) return e;
  int64_t most = 0;
  for (int q = 0; q < S.npes; q++) {
    lens[q] = all[q] <= max ? all[q] : 0;
    most = all[q] > most ? all[q] : most;
  }
  static uint8_t slot[NB_SLOT], got[NB_MAX_PES * NB_SLOT];
  int failed = 0;  // every round on every PE, whatever failed in one
  for (int64_t off = 0; off < most; off += NB_SLOT) {
    int64_t n = len - off < NB_SLOT ? len - off : NB_SLOT;
    memset(slot, 0, sizeof slot);
    if (n > 0) memcpy(slot, mine + off, n);
    if (int e = exchange(slot, NB_SLOT, got)) {
      if (!failed) failed = e;
      continue;
    }
    for (int q = 0; q < S.npes; q++) {
      int64_t m = lens[q] - off < NB_SLOT ? lens[q] - off : NB_SLOT;
      if (m > 0) memcpy(out + (size_t)q * max + off, got + (size_t)q * NB_SLOT, m);
    }
  }
  return failed ? failed : rc;
}

// A PE's status at an agreement: its code and message.
struct Verdict {
  int32_t status;
  int32_t pe;
  int64_t errors;   // verification counts and payload (the last agreement of a point)
  int64_t checked;
  int64_t bytes;
  int64_t value;    // a value every PE takes from one PE (the initiator's calibrated iteration count)
  char msg[NB_SLOT - 40];
};
static_assert(sizeof(Verdict) <= NB_SLOT, "a verdict must fit an exchange slot");

// agree is collective: every PE learns every PE's status. It returns the
// worst (an error before a non-capturable point before an unreachable one)
// and makes its message this PE's last error, naming the PE it came from.
// sums gets the verification counts and the payload summed over the job
// (3 values) when non-null; value, when non-null, carries this PE's value
// in and PE from's out.
static int agree(int st, int64_t errors, int64_t checked, int64_t bytes, nb_result *res, int64_t *sums, int64_t *value = nullptr,
                 int from = 0) {
  static Verdict all[NB_MAX_PES];
  Verdict v;
  memset(&v, 0, sizeof v);
  v.status = st;
  v.pe = S.me;
  v.errors = errors;
  v.checked = checked;
  v.bytes = bytes;
  if (value) v.value = *value;
  if (st) snprintf(v.msg, sizeof v.msg, "%s", g_err);
  int rc = exchange(&v, sizeof v, all);
  if (rc) return rc;
  if (value) *value = all[from].value;
  int worst = 0, who = -1;
  int64_t e = 0, c = 0, b = 0;
  for (int q = 0; q < S.npes; q++) {
    e += all[q].errors;
    c += all[q].checked;
    b += all[q].bytes;
    int s = all[q].status;
    if (!s) continue;
    int rank = s == NB_ERR ? 3 : (s == NB_NOT_CAPTURABLE ? 2 : 1);
    int wrank = worst == 0 ? 0 : (worst == NB_ERR ? 3 : (worst == NB_NOT_CAPTURABLE ? 2 : 1));
    if (rank > wrank) worst = s, who = q;
  }
  if (sums) sums[0] = e, sums[1] = c, sums[2] = b;
  if (!worst) return 0;
  if (res) res->failed_pe = who;
  if (who != S.me) fail(worst, "PE %d: %s", who, all[who].msg);
  return worst;
}
