// atomics.cuh: NVSHMEM's atomic memory operations (its AMO API) on 32- and
// 64-bit counters, and its floating-point adds (nvshmemx_{half,float,
// double}_atomic_{add,fetch_add}, NVSHMEM 3.7 and later) on 16-, 32- and
// 64-bit ones, each in two forms:
//   rma.<name>  a rate: every thread of the grid on its own counter in the
//               peer's memory, iters calls each, one quiet at the end
//               (the rma family, T_COUNTERS);
//   lat.<name>  a round trip: one thread, one counter; a fetching atomic's
//               next address depends on the value it returned, a
//               non-fetching one ends each iteration with quiet (the
//               latency family, T_ROUNDTRIP).
// An atomic is one line of NB_ATOMICS and its struct (NB_AMO): the counter
// types its calls take (NB_AMO_INT or NB_AMO_FLOAT: by args.elem, the C
// type and the dtype label the results give it), apply, the call at
// iteration it (it counts every call this counter has seen, across
// launches), and after, the bits a counter holds after n calls from start.
// Its checks (AmoRate, AmoTrip: the counters at after(operations), bit for
// bit) and both table entries follow from the line; the Go side reads the
// lines, the structs' types and the types' lists (and the two entry
// templates below) like any table entry (cuda/shim/ops.go).
// signal_add (nvshmemx_signal_op) is no AMO: rma.cuh.
// This file follows newer.cuh (NB_NVSHMEM_VERSION, needs_nvshmem_37).

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

// The counter types of an atomic (its NB_AMO names one): T(C type, dtype
// label) by element size (args.elem), the label a point's results carry
// (its digits are the type's bits: asserted below), and since when
// NVSHMEM's headers have the calls (major * 100 + minor; 0: every release
// the shim builds against). The Go side reads these four lines.
#define NB_AMO_INT(T) T(uint64_t, u64) T(uint32_t, u32)
#define NB_AMO_INT_SINCE 0
#define NB_AMO_FLOAT(T) T(double, f64) T(float, f32) T(__half, f16)
#define NB_AMO_FLOAT_SINCE 307

// NVSHMEM 3.7's floating-point adds (nvshmemx_: an extension of OpenSHMEM).
// Its headers: IB's native atomics do not add floats, so the calls run over
// load/store atomics (NVLink P2P; half's through a device-scope atomicAdd,
// CUDA having no system-scope one for half) and, towards a PE without a
// mapping, through the CPU proxy (IBRC), which adds on the host; IBGDA
// asserts they never reach it.
#if NB_NVSHMEM_VERSION >= NB_AMO_FLOAT_SINCE
#define NB_AMO_FLOAT_CALLS(T, N)                                                                                   \
  __device__ static inline T amo_fetch_add(T *p, T v, int pe) { return nvshmemx_##N##_atomic_fetch_add(p, v, pe); } \
  __device__ static inline void amo_add(T *p, T v, int pe) { nvshmemx_##N##_atomic_add(p, v, pe); }
NB_AMO_FLOAT_CALLS(__half, half)
NB_AMO_FLOAT_CALLS(float, float)
NB_AMO_FLOAT_CALLS(double, double)
#undef NB_AMO_FLOAT_CALLS
#endif

constexpr int amo_label_bits(const char *s) {
  int b = 0;
  for (s++; *s; s++) b = 10 * b + (*s - '0');
  return b;
}
#define NB_AMO_SIZE(Type, label) static_assert(8 * sizeof(Type) == amo_label_bits(#label), #label " is not the size of " #Type);
#define NB_AMO_CASE(Type, label) \
  if (elem == (int)sizeof(Type)) return fn(Type{});
#define NB_AMO_LABEL(Type, label) " " #label
// Amo<TYPES>: has (the headers have the calls), calls (what a waiver
// names), labels, floating, and with(elem, fn): fn(a value of the
// counters' C type), or a failure for a size the calls do not take.
#define NB_AMO_TYPES(N, CALLS)                                                                           \
  struct Amo##N {                                                                                       \
    static constexpr bool has = NB_NVSHMEM_VERSION >= NB_AMO_##N##_SINCE;                              \
    static_assert(NB_AMO_##N##_SINCE == 0 || NB_AMO_##N##_SINCE == 307, "needs_nvshmem_37 says 3.7");  \
    static constexpr const char *calls = CALLS;                                                         \
    static constexpr const char *labels = NB_AMO_##N(NB_AMO_LABEL);                                     \
    static constexpr bool floating = labels[1] == 'f';                                                  \
    NB_AMO_##N(NB_AMO_SIZE)                                                                             \
    template <typename Fn>                                                                              \
    static int with(int elem, Fn fn) {                                                                  \
      NB_AMO_##N(NB_AMO_CASE)                                                                           \
      return fail(NB_ERR, "atomic counters of %d bytes: this atomic takes%s", elem, labels);            \
    }                                                                                                   \
  };
NB_AMO_TYPES(INT, "nvshmem_{uint32,uint64}_atomic_*")
NB_AMO_TYPES(FLOAT, "nvshmemx_{half,float,double}_atomic_{add,fetch_add}")
#undef NB_AMO_TYPES
#undef NB_AMO_SIZE
#undef NB_AMO_CASE
#undef NB_AMO_LABEL

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

// The float atomics count calls modulo NB_AMO_FLOAT_WRAP: call it adds 1.0,
// or -(WRAP - 1) where it + 1 is a multiple of WRAP, so after n calls a
// counter holds n % WRAP and each fetch returns it % WRAP. A counter sees
// every call of a point (up to NB_MAX_ITERS a launch): sums of 1.0 alone
// would stop counting at 2048 in half (2^24 in float) and fail the check.
// Every value on the way is an integer 0 .. 1023 (-1023 .. 2046 where calls
// land out of order by less than a wrap), which half's 11-bit significand
// holds exactly (every integer up to 2048), and so float and double: one
// period for the three types. The check compares bits: exact.
#define NB_AMO_FLOAT_WRAP 1024
static_assert(2 * NB_AMO_FLOAT_WRAP <= 2048, "the float counters' values must be integers half holds exactly");

template <typename T>
__host__ __device__ static inline T amo_from(float v) {
  return (T)v;
}
template <>
__host__ __device__ inline __half amo_from<__half>(float v) {
  return __float2half(v);
}
template <typename T>
__device__ static inline T amo_float_step(uint64_t it) {
  return amo_from<T>((it + 1) % NB_AMO_FLOAT_WRAP ? 1.0f : -(float)(NB_AMO_FLOAT_WRAP - 1));
}

// The bits of the value v in the float format of `bits` bits.
static uint64_t amo_float_bits(float v, int bits) {
  if (bits == 64) {
    double d = v;
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
  }
  if (bits == 32) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
  }
  __half_raw h = amo_from<__half>(v);
  return h.x;
}
// The value of a counter's bits (for messages).
static double amo_float_value(uint64_t w, int bits) {
  if (bits == 64) {
    double d;
    memcpy(&d, &w, sizeof d);
    return d;
  }
  if (bits == 32) {
    uint32_t u = (uint32_t)w;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  __half_raw h;
  h.x = (unsigned short)w;
  return __half2float(__half(h));
}
static inline uint64_t amo_float_count(uint64_t n, int bits) { return amo_float_bits((float)(n % NB_AMO_FLOAT_WRAP), bits); }

// The atomics. TYPES: the counters its calls take (NB_AMO_<TYPES>).
// fetches: the call returns the old value (a round trip then waits for it;
// else for quiet). start: every counter before the first call (its bits:
// 0 is also 0.0).
#define NB_AMO(Name, TYPES, FETCHES, START, AFTER, CALL)                                            \
  struct Name {                                                                                     \
    using Types = Amo##TYPES;                                                                       \
    static constexpr int fetches = FETCHES;                                                         \
    static uint64_t start(int bits) { return amo_mask(START, bits); }                               \
    static uint64_t after(uint64_t n, int bits) { return AFTER(n, bits); }                          \
    template <typename T>                                                                           \
    __device__ static inline T apply(T *p, uint64_t it, int pe) {                                   \
      (void)it;                                                                                     \
      CALL;                                                                                         \
    }                                                                                               \
  };
NB_AMO(AmoFetchAdd, INT, 1, 0, amo_count, return amo_fetch_add(p, (T)1, pe))
NB_AMO(AmoAdd, INT, 0, 0, amo_count, amo_add(p, (T)1, pe); return 0)
NB_AMO(AmoFetchInc, INT, 1, 0, amo_count, return amo_fetch_inc(p, pe))
NB_AMO(AmoInc, INT, 0, 0, amo_count, amo_inc(p, pe); return 0)
NB_AMO(AmoSet, INT, 0, 0, amo_count, amo_set(p, (T)(it + 1), pe); return 0)
NB_AMO(AmoSwap, INT, 1, 0, amo_count, return amo_swap(p, (T)(it + 1), pe))
NB_AMO(AmoCompareSwap, INT, 1, 0, amo_count, return amo_compare_swap(p, (T)it, (T)(it + 1), pe))
NB_AMO(AmoFetchAnd, INT, 1, ~0ull, amo_low_bits_cleared, return amo_fetch_and(p, (T)~bit_of<T>(it), pe))
NB_AMO(AmoAnd, INT, 0, ~0ull, amo_low_bits_cleared, amo_and(p, (T)~bit_of<T>(it), pe); return 0)
NB_AMO(AmoFetchOr, INT, 1, 0, amo_low_bits, return amo_fetch_or(p, bit_of<T>(it), pe))
NB_AMO(AmoOr, INT, 0, 0, amo_low_bits, amo_or(p, bit_of<T>(it), pe); return 0)
NB_AMO(AmoFetchXor, INT, 1, 0, amo_xor_upto, return amo_fetch_xor(p, (T)(it + 1), pe))
NB_AMO(AmoXor, INT, 0, 0, amo_xor_upto, amo_xor(p, (T)(it + 1), pe); return 0)
NB_AMO(AmoFloatFetchAdd, FLOAT, 1, 0, amo_float_count, return amo_fetch_add(p, amo_float_step<T>(it), pe))
NB_AMO(AmoFloatAdd, FLOAT, 0, 0, amo_float_count, amo_add(p, amo_float_step<T>(it), pe); return T{})
#undef NB_AMO

// The table's lines: name (rma.<name>, lat.<name>), the struct, what it
// does (the Go side's description). A new atomic is a line here and its
// NB_AMO above.
#define NB_ATOMICS(X)                                                                           \
  X(fetch_add, AmoFetchAdd, "atomic fetch_add of 1")                                            \
  X(add, AmoAdd, "atomic add of 1")                                                             \
  X(fetch_inc, AmoFetchInc, "atomic fetch_inc")                                                 \
  X(inc, AmoInc, "atomic inc")                                                                  \
  X(set, AmoSet, "atomic set of the operation's count")                                         \
  X(swap, AmoSwap, "atomic swap in of the operation's count")                                   \
  X(compare_swap, AmoCompareSwap, "atomic compare_swap of the count with the count + 1")        \
  X(fetch_and, AmoFetchAnd, "atomic fetch_and clearing one bit")                                \
  X(and, AmoAnd, "atomic and clearing one bit")                                                 \
  X(fetch_or, AmoFetchOr, "atomic fetch_or setting one bit")                                    \
  X(or, AmoOr, "atomic or setting one bit")                                                     \
  X(fetch_xor, AmoFetchXor, "atomic fetch_xor of the count")                                    \
  X(xor, AmoXor, "atomic xor of the count")                                                     \
  X(float_fetch_add, AmoFloatFetchAdd,                                                          \
    "nvshmemx_<T>_atomic_fetch_add of 1.0, a counter modulo 1024 (exact in half; "              \
    "NVSHMEM >= 3.7; load/store or the CPU proxy only: IB's atomics add no floats)")            \
  X(float_add, AmoFloatAdd,                                                                     \
    "nvshmemx_<T>_atomic_add of 1.0, a counter modulo 1024 (exact in half; "                    \
    "NVSHMEM >= 3.7; load/store or the CPU proxy only: IB's atomics add no floats)")

__device__ uint64_t g_amo_keep;  // a sink the compiler cannot drop (the fetches stay)

// A counter's value as an unsigned word of its size (a float's bits): what
// the rate's sink and the round trip's next address take from a fetch.
template <int BYTES> struct AmoWordOf;
template <> struct AmoWordOf<2> { using type = uint16_t; };
template <> struct AmoWordOf<4> { using type = uint32_t; };
template <> struct AmoWordOf<8> { using type = uint64_t; };
template <typename T>
using amo_word_t = typename AmoWordOf<sizeof(T)>::type;
template <typename T>
__device__ static inline amo_word_t<T> amo_word(T v) {
  amo_word_t<T> w;
  memcpy(&w, &v, sizeof w);
  return w;
}

// The rate: thread t calls F on counter t of the peer's array, iters times;
// base counts the calls each counter saw before this launch.
template <typename F, typename T>
__global__ void k_amo(T *slots, int iters, int peer, uint64_t base, int64_t *st) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  amo_word_t<T> sink = 0;
  stamp_begin(st);
  for (int it = 0; it < iters; it++) sink += amo_word(F::template apply<T>(slots + t, base + it, peer));
  nvshmem_quiet();
  stamp_end(st);
  if (sink == (amo_word_t<T>)0x5A5A5A5A) g_amo_keep = sink;
}

// The round trip: one thread; a fetching call's next address is the
// counter plus the returned value's bits ANDed with zero (0, unknown to the
// compiler): the next call waits for the value. A non-fetching one waits
// for quiet.
template <typename F, typename T>
__global__ void k_lat_amo(T *slot, int iters, int peer, int64_t *times, uint64_t zero, uint64_t base) {
  __shared__ volatile amo_word_t<T> dep;
  amo_word_t<T> d = 0;
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    if constexpr (F::fetches) {
      T old = F::template apply<T>(slot + d, base + it, peer);
      d = amo_word(old) & (amo_word_t<T>)zero;
      dep = d;  // waits for the value
    } else {
      F::template apply<T>(slot, base + it, peer);
      nvshmem_quiet();
    }
  }
  stamp(times, iters);
}

static int amo_bits(const Run *r) { return 8 * r->a->elem; }

// amo_takes: F's calls take counters of args.elem bytes, and the headers
// the shim was built against have them (else the row is waived: "needs
// NVSHMEM >= 3.7"). The counters' reset asks it on every PE, before
// anything runs.
template <typename F>
static int amo_takes(Run *r) {
  using C = typename F::Types;
  if (int rc = needs_nvshmem_37(C::has, C::calls)) return rc;
  return C::with(r->a->elem, [](auto) { return 0; });
}

// by_width calls fn with a zero of the unsigned word of `elem` bytes.
template <typename Fn>
static int by_width(int elem, Fn fn) {
  if (elem == 8) return fn(uint64_t{});
  if (elem == 4) return fn(uint32_t{});
  if (elem == 2) return fn(uint16_t{});
  return fail(NB_ERR, "atomic counters of %d bytes: want 2, 4 or 8", elem);
}

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

// counters_within checks that the n integer counters at w hold a value in lo .. hi.
static int counters_within(Region w, uint64_t lo, uint64_t hi, nb_result *res) {
  return by_width(w.elem, [&](auto z) {
    using W = decltype(z);
    return counted(
        w.n, res, [&](unsigned long long *cnt) { k_check_within<W><<<256, 256, 0, S.stream>>>((const W *)w.p, w.n, (W)lo, (W)hi, cnt); },
        [&](unsigned long long first, unsigned long long wrong) {
          snprintf(res->detail, sizeof res->detail, "counter %llu (and %llu in all) outside %llu .. %llu", first, wrong - 1,
                   (unsigned long long)lo, (unsigned long long)hi);
        });
  });
}

// counters_hold checks the n counters of w.elem bytes at w against the
// bits want, a float counter's values named in the message.
static int counters_hold(Region w, uint64_t want, bool floating, nb_result *res) {
  return by_width(w.elem, [&](auto z) {
    using W = decltype(z);
    return counted(
        w.n, res, [&](unsigned long long *cnt) { k_check_words<W><<<256, 256, 0, S.stream>>>((const W *)w.p, w.n, (W)want, cnt); },
        [&](unsigned long long first, unsigned long long wrong) {
          W got = 0;
          cudaMemcpy(&got, (const W *)w.p + first, sizeof got, cudaMemcpyDeviceToHost);
          int bits = 8 * (int)sizeof(W);
          if (floating)
            snprintf(res->detail, sizeof res->detail, "counter %llu (and %llu more): got %g (bits 0x%llx), want %g (0x%llx)", first, wrong - 1,
                     amo_float_value(got, bits), (unsigned long long)got, amo_float_value(want, bits), (unsigned long long)want);
          else
            snprintf(res->detail, sizeof res->detail, "counter %llu: got %llu, want %llu", first, (unsigned long long)got,
                     (unsigned long long)want);
        });
  });
}

// amo_hold: the counters at w after n calls of F from the PE `from`.
template <typename F>
static int amo_hold(Run *r, Region w, int from, nb_result *res) {
  uint64_t want = F::after(r->ops, amo_bits(r));
  if (amo_last_write<F> && nvshmem_ptr(S.dst, from) == nullptr) return counters_within(w, r->ops > 0 ? 1 : 0, want, res);
  return counters_hold(w, want, F::Types::floating, res);
}

// fill_counters sets this PE's n counters of elem bytes to the bits v.
static int fill_counters(int64_t n, int elem, uint64_t v) {
  return by_width(elem, [&](auto z) {
    using W = decltype(z);
    k_fill_words<W><<<256, 256, 0, S.stream>>>((W *)S.dst, n, (W)v);
    CKLAUNCH("counter fill");
    return 0;
  });
}

// The checks: the target's counters (every thread's, or the round trip's
// one) at after(operations), from start (their reset, on every PE before
// the first launch, which first asks amo_takes).
template <typename F>
struct AmoRate {
  static Region where(Run *r) {
    return rma_put_from(r) < 0 ? nowhere() : region(S.dst, (int64_t)r->a->ctas * r->a->threads, r->a->elem);
  }
  static int hold(Run *r, Region w, nb_result *res) { return amo_hold<F>(r, w, rma_put_from(r), res); }
  static int reset(Run *r) {
    if (int rc = amo_takes<F>(r)) return rc;
    return fill_counters((int64_t)r->a->ctas * r->a->threads, r->a->elem, F::start(amo_bits(r)));
  }
  static constexpr Check check = {"every counter at the value its calls leave", CheckAt<where, hold>::verify, CheckAt<where, hold>::corrupt, reset};
};
template <typename F>
struct AmoTrip {
  static Region where(Run *r) { return S.me != r->a->peer ? nowhere() : region(S.dst, 1, r->a->elem); }
  static int hold(Run *r, Region w, nb_result *res) { return amo_hold<F>(r, w, 0, res); }
  static int reset(Run *r) {
    if (int rc = amo_takes<F>(r)) return rc;
    return fill_counters(1, r->a->elem, F::start(amo_bits(r)));
  }
  static constexpr Check check = {"the peer's counter at the value the calls leave", CheckAt<where, hold>::verify, CheckAt<where, hold>::corrupt,
                                  reset};
};

// The launches, with the counters' C type by args.elem. A row whose calls
// the headers lack compiles no kernel (its reset waived it: never reached).
template <typename F>
static int launch_amo(Run *r, int iters) {
  using C = typename F::Types;
  if constexpr (!C::has) {
    (void)iters;
    return needs_nvshmem_37(false, C::calls);
  } else {
    const Args *a = r->a;
    return C::with(a->elem, [&](auto z) {
      using T = decltype(z);
      launched(r, k_amo<F, T>, a->ctas, a->threads);
      k_amo<F, T><<<a->ctas, a->threads, 0, S.stream>>>((T *)S.dst, iters, r->target, (uint64_t)r->ops, S.times);
      CKLAUNCH("atomic kernel");
      return 0;
    });
  }
}

template <typename F>
static int launch_lat_amo(Run *r, int iters) {
  using C = typename F::Types;
  if constexpr (!C::has) {
    (void)iters;
    return needs_nvshmem_37(false, C::calls);
  } else {
    return C::with(r->a->elem, [&](auto z) {
      using T = decltype(z);
      k_lat_amo<F, T><<<1, 1, 0, S.stream>>>((T *)S.dst, iters, r->target, S.times, 0, (uint64_t)r->ops);
      CKLAUNCH("atomic latency kernel");
      return 0;
    });
  }
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
