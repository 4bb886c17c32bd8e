// atomics.cuh: NVSHMEM's atomic memory operations (its AMO API) on 32- and
// 64-bit counters (args.elem 4 or 8), each in two forms:
//   rma.<name>  a rate: every thread of the grid on its own counter in the
//               peer's memory, iters calls each, one quiet at the end
//               (the rma family, T_COUNTERS);
//   lat.<name>  a round trip: one thread, one counter; a fetching atomic's
//               next address depends on the value it returned, a
//               non-fetching one ends each iteration with quiet (the
//               latency family, T_ROUNDTRIP).
// An atomic is one line of NB_ATOMICS and its struct: apply, the call at
// iteration it (it counts every call this counter has seen, across
// launches), and after, the value a counter holds after n calls from start.
// Its checks (AmoRate, AmoTrip: the counters at after(operations)) and both
// table entries follow from the line; the Go side reads the lines (and the
// two entry templates below) like any table entry (cuda/ops.go).
// signal_add (nvshmemx_signal_op) is no AMO: rma.cuh.

enum {
  NB_OP_AMO = 61,      // a rate of one of NB_ATOMICS (the entry's launch names which)
  NB_OP_LAT_AMO = 62,  // a round trip of one of NB_ATOMICS
};

// The AMO calls by counter type: uint32_t and uint64_t.
#define NB_AMO_CALLS(T, N)                                                                                                      \
  __device__ static inline T amo_fetch_add(T *p, T v, int pe) { return nvshmem_##N##_atomic_fetch_add(p, v, pe); }             \
  __device__ static inline void amo_add(T *p, T v, int pe) { nvshmem_##N##_atomic_add(p, v, pe); }                            \
  __device__ static inline T amo_fetch_inc(T *p, int pe) { return nvshmem_##N##_atomic_fetch_inc(p, pe); }                     \
  __device__ static inline void amo_inc(T *p, int pe) { nvshmem_##N##_atomic_inc(p, pe); }                                     \
  __device__ static inline void amo_set(T *p, T v, int pe) { nvshmem_##N##_atomic_set(p, v, pe); }                            \
  __device__ static inline T amo_swap(T *p, T v, int pe) { return nvshmem_##N##_atomic_swap(p, v, pe); }                       \
  __device__ static inline T amo_compare_swap(T *p, T c, T v, int pe) { return nvshmem_##N##_atomic_compare_swap(p, c, v, pe); } \
  __device__ static inline T amo_fetch_and(T *p, T v, int pe) { return nvshmem_##N##_atomic_fetch_and(p, v, pe); }             \
  __device__ static inline void amo_and(T *p, T v, int pe) { nvshmem_##N##_atomic_and(p, v, pe); }                            \
  __device__ static inline T amo_fetch_or(T *p, T v, int pe) { return nvshmem_##N##_atomic_fetch_or(p, v, pe); }               \
  __device__ static inline void amo_or(T *p, T v, int pe) { nvshmem_##N##_atomic_or(p, v, pe); }                              \
  __device__ static inline T amo_fetch_xor(T *p, T v, int pe) { return nvshmem_##N##_atomic_fetch_xor(p, v, pe); }             \
  __device__ static inline void amo_xor(T *p, T v, int pe) { nvshmem_##N##_atomic_xor(p, v, pe); }
NB_AMO_CALLS(uint32_t, uint32)
NB_AMO_CALLS(uint64_t, uint64)
#undef NB_AMO_CALLS

// A counter of `bits` bits: the low bits of v.
static inline uint64_t amo_mask(uint64_t v, int bits) { return bits == 64 ? v : v & ((1ull << bits) - 1); }

// Counting atomics: call it adds 1 (or writes it + 1), so n calls leave n.
static inline uint64_t amo_count(uint64_t n, int bits) { return amo_mask(n, bits); }
// and clears bit it % bits of a counter that starts all ones; or sets it
// in one that starts at zero: after n calls the low min(n, bits) bits.
static inline uint64_t amo_low_bits(uint64_t n, int bits) { return n >= (uint64_t)bits ? amo_mask(~0ull, bits) : (1ull << n) - 1; }
static inline uint64_t amo_low_bits_cleared(uint64_t n, int bits) { return amo_mask(~amo_low_bits(n, bits), bits); }
// xor of 1, 2, ..., n (call it xors it + 1).
static inline uint64_t amo_xor_upto(uint64_t n, int bits) {
  uint64_t x[4] = {n, 1, n + 1, 0};
  return amo_mask(x[n % 4], bits);
}

template <typename T>
__device__ static inline T bit_of(uint64_t it) { return (T)1 << (it % (8 * sizeof(T))); }

// The atomics. fetches: the call returns the old value (a round trip then
// waits for it; else for quiet). start: every counter before the first call.
#define NB_AMO(Name, FETCHES, START, AFTER, CALL)                                                   \
  struct Name {                                                                                     \
    static constexpr int fetches = FETCHES;                                                         \
    static uint64_t start(int bits) { return amo_mask(START, bits); }                               \
    static uint64_t after(uint64_t n, int bits) { return AFTER(n, bits); }                          \
    template <typename T>                                                                           \
    __device__ static inline T apply(T *p, uint64_t it, int pe) {                                   \
      (void)it;                                                                                     \
      CALL;                                                                                         \
    }                                                                                               \
  };
NB_AMO(AmoFetchAdd, 1, 0, amo_count, return amo_fetch_add(p, (T)1, pe))
NB_AMO(AmoAdd, 0, 0, amo_count, amo_add(p, (T)1, pe); return 0)
NB_AMO(AmoFetchInc, 1, 0, amo_count, return amo_fetch_inc(p, pe))
NB_AMO(AmoInc, 0, 0, amo_count, amo_inc(p, pe); return 0)
NB_AMO(AmoSet, 0, 0, amo_count, amo_set(p, (T)(it + 1), pe); return 0)
NB_AMO(AmoSwap, 1, 0, amo_count, return amo_swap(p, (T)(it + 1), pe))
NB_AMO(AmoCompareSwap, 1, 0, amo_count, return amo_compare_swap(p, (T)it, (T)(it + 1), pe))
NB_AMO(AmoFetchAnd, 1, ~0ull, amo_low_bits_cleared, return amo_fetch_and(p, (T)~bit_of<T>(it), pe))
NB_AMO(AmoAnd, 0, ~0ull, amo_low_bits_cleared, amo_and(p, (T)~bit_of<T>(it), pe); return 0)
NB_AMO(AmoFetchOr, 1, 0, amo_low_bits, return amo_fetch_or(p, bit_of<T>(it), pe))
NB_AMO(AmoOr, 0, 0, amo_low_bits, amo_or(p, bit_of<T>(it), pe); return 0)
NB_AMO(AmoFetchXor, 1, 0, amo_xor_upto, return amo_fetch_xor(p, (T)(it + 1), pe))
NB_AMO(AmoXor, 0, 0, amo_xor_upto, amo_xor(p, (T)(it + 1), pe); return 0)
#undef NB_AMO

// The table's lines: name (rma.<name>, lat.<name>), the struct, what it
// does (the Go side's description). A new atomic is a line here and its
// NB_AMO above.
#define NB_ATOMICS(X)                                                                   \
  X(fetch_add, AmoFetchAdd, "atomic fetch_add of 1")                                     \
  X(add, AmoAdd, "atomic add of 1")                                                      \
  X(fetch_inc, AmoFetchInc, "atomic fetch_inc")                                          \
  X(inc, AmoInc, "atomic inc")                                                           \
  X(set, AmoSet, "atomic set of the operation's count")                                  \
  X(swap, AmoSwap, "atomic swap in of the operation's count")                            \
  X(compare_swap, AmoCompareSwap, "atomic compare_swap of the count with the count + 1") \
  X(fetch_and, AmoFetchAnd, "atomic fetch_and clearing one bit")                         \
  X(and, AmoAnd, "atomic and clearing one bit")                                          \
  X(fetch_or, AmoFetchOr, "atomic fetch_or setting one bit")                             \
  X(or, AmoOr, "atomic or setting one bit")                                              \
  X(fetch_xor, AmoFetchXor, "atomic fetch_xor of the count")                             \
  X(xor, AmoXor, "atomic xor of the count")

__device__ uint64_t g_amo_keep;  // a sink the compiler cannot drop (the fetches stay)

// The rate: thread t calls F on counter t of the peer's array, iters times;
// base counts the calls each counter saw before this launch.
template <typename F, typename T>
__global__ void k_amo(T *slots, int iters, int peer, uint64_t base, int64_t *st) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  T sink = 0;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) sink += F::template apply<T>(slots + t, base + it, peer);
  nvshmem_quiet();
  stamp_end(st);
  if (sink == (T)0x5A5A5A5A) g_amo_keep = sink;
}

// The round trip: one thread; a fetching call's next address is the
// counter plus the returned value ANDed with zero (0, unknown to the
// compiler): the next call waits for the value. A non-fetching one waits
// for quiet.
template <typename F, typename T>
__global__ void k_lat_amo(T *slot, int iters, int peer, int64_t *times, uint64_t zero, uint64_t base) {
  __shared__ volatile T dep;
  T d = 0;
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    if constexpr (F::fetches) {
      T old = F::template apply<T>(slot + d, base + it, peer);
      d = old & (T)zero;
      dep = d;  // waits for the value
    } else {
      F::template apply<T>(slot, base + it, peer);
      nvshmem_quiet();
    }
  }
  stamp(times, iters);
}

static int amo_bits(const Run *r) { return 8 * r->a->elem; }

// A set leaves the value of the call that landed last: over load/store the
// calls of one thread to one word land in order, over a remote transport
// NVSHMEM does not order successive non-fetching atomics without a fence,
// so there the check takes any of the calls' values (1 .. n).
template <typename F> constexpr bool amo_last_write = false;
template <> constexpr bool amo_last_write<AmoSet> = true;

template <typename T>
__global__ void k_check_within(const T *b, int64_t n, T lo, T hi, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (b[i] < lo || b[i] > hi) mismatch(cnt, i);
}

// counters_within checks that the n counters at w hold a value in lo .. hi.
static int counters_within(Region w, uint64_t lo, uint64_t hi, nb_result *res) {
  return counted(
      w.n, res,
      [&](unsigned long long *cnt) {
        if (w.elem == 8) k_check_within<uint64_t><<<256, 256, 0, S.stream>>>((const uint64_t *)w.p, w.n, lo, hi, cnt);
        else k_check_within<uint32_t><<<256, 256, 0, S.stream>>>((const uint32_t *)w.p, w.n, (uint32_t)lo, (uint32_t)hi, cnt);
      },
      [&](unsigned long long first, unsigned long long wrong) {
        snprintf(res->detail, sizeof res->detail, "counter %llu (and %llu in all) outside %llu .. %llu", first, wrong - 1,
                 (unsigned long long)lo, (unsigned long long)hi);
      });
}

// counters_hold checks the n counters of `elem` bytes at w against want.
static int counters_hold(Region w, uint64_t want, nb_result *res) {
  if (w.elem == 8) return check_u64((const uint64_t *)w.p, w.n, want, res);
  return check_words<uint32_t>((const uint32_t *)w.p, w.n, (uint32_t)want, res);
}

// amo_hold: the counters at w after n calls of F from the PE `from`.
template <typename F>
static int amo_hold(Run *r, Region w, int from, nb_result *res) {
  uint64_t want = F::after(r->ops, amo_bits(r));
  if (amo_last_write<F> && nvshmem_ptr(S.dst, from) == nullptr) return counters_within(w, r->ops > 0 ? 1 : 0, want, res);
  return counters_hold(w, want, res);
}

// fill_counters sets this PE's n counters of elem bytes to v.
static int fill_counters(int64_t n, int elem, uint64_t v) {
  if (elem == 8) k_fill_words<uint64_t><<<256, 256, 0, S.stream>>>((uint64_t *)S.dst, n, v);
  else k_fill_words<uint32_t><<<256, 256, 0, S.stream>>>((uint32_t *)S.dst, n, (uint32_t)v);
  CKLAUNCH("counter fill");
  return 0;
}

// The checks: the target's counters (every thread's, or the round trip's
// one) at after(operations), from start (their reset).
template <typename F>
struct AmoRate {
  static Region where(Run *r) {
    return rma_put_from(r) < 0 ? nowhere() : region(S.dst, (int64_t)r->a->ctas * r->a->threads, r->a->elem);
  }
  static int hold(Run *r, Region w, nb_result *res) { return amo_hold<F>(r, w, rma_put_from(r), res); }
  static int reset(Run *r) { return fill_counters((int64_t)r->a->ctas * r->a->threads, r->a->elem, F::start(amo_bits(r))); }
  static constexpr Check check = {"every counter at the value its calls leave", CheckAt<where, hold>::verify, CheckAt<where, hold>::corrupt, reset};
};
template <typename F>
struct AmoTrip {
  static Region where(Run *r) { return S.me != r->a->peer ? nowhere() : region(S.dst, 1, r->a->elem); }
  static int hold(Run *r, Region w, nb_result *res) { return amo_hold<F>(r, w, 0, res); }
  static int reset(Run *r) { return fill_counters(1, r->a->elem, F::start(amo_bits(r))); }
  static constexpr Check check = {"the peer's counter at the value the calls leave", CheckAt<where, hold>::verify, CheckAt<where, hold>::corrupt,
                                  reset};
};

template <typename F>
static int launch_amo(Run *r, int iters) {
  const Args *a = r->a;
  if (a->elem == 8) {
    launched(r, k_amo<F, uint64_t>, a->ctas, a->threads);
    k_amo<F, uint64_t><<<a->ctas, a->threads, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, (uint64_t)r->ops, S.times);
  } else {
    launched(r, k_amo<F, uint32_t>, a->ctas, a->threads);
    k_amo<F, uint32_t><<<a->ctas, a->threads, 0, S.stream>>>((uint32_t *)S.dst, iters, r->target, (uint64_t)r->ops, S.times);
  }
  CKLAUNCH("atomic kernel");
  return 0;
}

template <typename F>
static int launch_lat_amo(Run *r, int iters) {
  if (r->a->elem != 4 && r->a->elem != 8) return fail(NB_ERR, "atomic counters of %d bytes: want 4 or 8", r->a->elem);
  if (r->a->elem == 8) k_lat_amo<F, uint64_t><<<1, 1, 0, S.stream>>>((uint64_t *)S.dst, iters, r->target, S.times, 0, (uint64_t)r->ops);
  else k_lat_amo<F, uint32_t><<<1, 1, 0, S.stream>>>((uint32_t *)S.dst, iters, r->target, S.times, 0, (uint64_t)r->ops);
  CKLAUNCH("atomic latency kernel");
  return 0;
}

// The two entries of a line (the Go side reads these templates).
#define NB_AMO_RATE(name, F, what) {NB_OP_AMO, "rma." #name, &kRMA, T_COUNTERS, AmoRate<F>::check, launch_amo<F>},
#define NB_AMO_TRIP(name, F, what) {NB_OP_LAT_AMO, "lat." #name, &kLat, T_ROUNDTRIP, AmoTrip<F>::check, launch_lat_amo<F>},
static constexpr OpEntry kAmoRateOps[] = {NB_ATOMICS(NB_AMO_RATE)};
static constexpr OpEntry kAmoTripOps[] = {NB_ATOMICS(NB_AMO_TRIP)};
NB_CHECKED(kAmoRateOps);
NB_CHECKED(kAmoTripOps);
#undef NB_AMO_RATE
#undef NB_AMO_TRIP
