// check.cuh: the verification pattern and the checks every family uses:
// fill a source with a PE's pattern, poison a destination, and count the
// elements that differ from what should have landed (one helper, counted,
// runs any check kernel and reports the first mismatch).

// Verification pattern: byte i of PE pe's source under seed s.
__host__ __device__ static inline uint8_t pat(int64_t i, int pe, int64_t s) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)s << 17) ^ ((uint64_t)(pe + 1) * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 29;
  return (uint8_t)(x ^ (x >> 8));
}

__global__ void k_fill(uint8_t *b, int64_t n, int pe, int64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    b[i] = pat(i, pe, seed);
}

__global__ void k_poison(uint8_t *b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    b[i] = (uint8_t)(0xA5 ^ (i * 13));
}

__global__ void k_zero_u64(uint64_t *b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = 0;
}

// mismatch records element i as wrong: cnt[0] counts, cnt[1] keeps the first.
__device__ static inline void mismatch(unsigned long long *cnt, int64_t i) {
  atomicAdd(cnt, 1ull);
  atomicMin(cnt + 1, (unsigned long long)i);
}

// base: the offset in the source that b[0] came from.
__global__ void k_check(const uint8_t *b, int64_t n, int64_t base, int pe, int64_t seed, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (b[i] != pat(base + i, pe, seed)) mismatch(cnt, i);
}

template <typename T>
__global__ void k_check_words(const T *b, int64_t n, T want, unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (b[i] != want) mismatch(cnt, i);
}

template <typename T>
__global__ void k_fill_words(T *b, int64_t n, T v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = v;
}

// counted runs a check: launch(cnt) starts a kernel that calls mismatch for
// every wrong element of n; the outcome is added to res, the first mismatch
// described by describe(first, wrong) into res->detail (when it is still
// empty). It returns a CUDA failure, never a mismatch.
template <typename Launch, typename Describe>
static int counted(int64_t n, nb_result *res, Launch launch, Describe describe) {
  unsigned long long h[2] = {0, ~0ull};
  CK(cudaMemcpy(S.count, h, sizeof h, cudaMemcpyHostToDevice));
  launch(S.count);
  CKLAUNCH("check kernel");
  CK(cudaStreamSynchronize(S.stream));
  CK(cudaMemcpy(h, S.count, sizeof h, cudaMemcpyDeviceToHost));
  res->checked += n;
  res->errors += (int64_t)h[0];
  if (h[0] && !res->detail[0]) describe(h[1], h[0]);
  return 0;
}

// check_bytes checks n bytes of buf against src_pe's pattern from offset base.
static int check_bytes(const uint8_t *buf, int64_t n, int64_t base, int src_pe, int64_t seed, nb_result *r) {
  return counted(
      n, r, [&](unsigned long long *cnt) { k_check<<<1024, 256, 0, S.stream>>>(buf, n, base, src_pe, seed, cnt); },
      [&](unsigned long long first, unsigned long long) {
        uint8_t got = 0;
        cudaMemcpy(&got, buf + first, 1, cudaMemcpyDeviceToHost);
        snprintf(r->detail, sizeof r->detail, "byte %llu: got 0x%02x, want 0x%02x (pattern of PE %d, seed %lld)", first, got,
                 pat(base + (int64_t)first, src_pe, seed), src_pe, (long long)seed);
      });
}

// check_words checks n words (counters) of buf against want.
template <typename T>
static int check_words(const T *buf, int64_t n, T want, nb_result *r) {
  return counted(
      n, r, [&](unsigned long long *cnt) { k_check_words<T><<<256, 256, 0, S.stream>>>(buf, n, want, cnt); },
      [&](unsigned long long first, unsigned long long) {
        T got = 0;
        cudaMemcpy(&got, buf + first, sizeof got, cudaMemcpyDeviceToHost);
        snprintf(r->detail, sizeof r->detail, "counter %llu: got %llu, want %llu", first, (unsigned long long)got,
                 (unsigned long long)want);
      });
}
static int check_u64(const uint64_t *buf, int64_t n, uint64_t want, nb_result *r) { return check_words<uint64_t>(buf, n, want, r); }

// corrupt_region damages element n/2 of w: its most significant byte's bit 6
// flips (a byte of a pattern, a counter's high bits, the exponent's top bit
// of a float or half: a value no exact or tolerant comparison accepts).
static int corrupt_region(Region w) {
  uint8_t *p = (uint8_t *)w.p + (w.n / 2) * w.elem + (w.elem - 1);
  uint8_t b = 0;
  CK(cudaStreamSynchronize(S.stream));
  CK(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost));
  b ^= 0x40;
  CK(cudaMemcpy(p, &b, 1, cudaMemcpyHostToDevice));
  return 0;
}

// CheckAt makes a Check of where a result lands on this PE (a Region, p null
// where nothing lands) and how it is verified there: verify and corrupt
// read the same region, so what the test damages is what the check reads.
template <Region (*WHERE)(Run *), int (*VERIFY)(Run *, Region, nb_result *)>
struct CheckAt {
  static int verify(Run *r, nb_result *res) {
    Region w = WHERE(r);
    return w.p ? VERIFY(r, w, res) : 0;
  }
  static int corrupt(Run *r) {
    Region w = WHERE(r);
    return w.p ? corrupt_region(w) : 0;
  }
};
#define NB_CHECK(name, what, where, how) \
  static constexpr Check name = {what, CheckAt<where, how>::verify, CheckAt<where, how>::corrupt}

// Region helpers: nothing, and n elements of elem bytes at p.
static inline Region nowhere() { return Region{nullptr, 0, 0}; }
static inline Region region(void *p, int64_t n, int elem) { return Region{p, n, elem}; }

static int fill_src(int64_t n, int64_t seed) {
  k_fill<<<1024, 256, 0, S.stream>>>(S.src, n, S.me, seed);
  CKLAUNCH("fill kernel");
  return 0;
}

// poison: n bytes at p set to what no check accepts (an output, before its
// point runs); what names the launch in an error. poison_dst: the
// destination buffer's.
static int poison(void *p, int64_t n, const char *what) {
  k_poison<<<1024, 256, 0, S.stream>>>((uint8_t *)p, n);
  CKLAUNCH(what);
  return 0;
}

static int poison_dst(int64_t n) { return poison(S.dst, n, "poison kernel"); }
