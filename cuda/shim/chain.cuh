// chain.cuh: the pointer chains that every chase walks (the get / g round
// trips of the latency family, NCCL's LSA get, and the in-run floors
// limit/chase-*). A chain is n blocks of `stride` bytes in a PE's source
// buffer; block k's first word is the index of the next block, and the
// blocks form one random cycle (Sattolo's algorithm, a fixed seed), so a
// walk visits every block before it repeats and consecutive hops land far
// apart. A chain is memory-served (at least 4 x L2, and the L2 flushed
// after it is written: the fill's last lines would otherwise answer about a
// quarter of the hops from the cache) or cache-served (a chain within the L2,
// read once before timing, so every hop is an L2 hit): the two floors a round
// trip is compared with.

struct Chain {
  int64_t stride, n;
  int warm;  // cache-served: the chain is read into L2 before timing
};

// chain_of is the chain of a chase of size-byte blocks: at least
// NB_CHAIN_BYTES and 4 x L2 of memory (extent 0), or extent bytes read into
// the L2 first; within the buffer either way.
static Chain chain_of(int64_t size, int64_t extent) {
  Chain c;
  int64_t s = size < 128 ? 128 : size;
  c.stride = (s + 127) & ~127ll;
  int64_t bytes = extent > 0 ? extent : (4 * S.l2 > NB_CHAIN_BYTES ? 4 * S.l2 : NB_CHAIN_BYTES);
  if (bytes > S.buf) bytes = S.buf;
  c.n = bytes / c.stride;
  c.warm = extent > 0;
  return c;
}

// The host's copy of the cycle (the checks replay walks on it), made once
// per block count.
static uint32_t *g_cycle;
static int64_t g_cycle_n;

static const uint32_t *cycle_of(int64_t n) {
  if (g_cycle && g_cycle_n == n) return g_cycle;
  free(g_cycle);
  g_cycle = (uint32_t *)malloc(n * sizeof(uint32_t));
  g_cycle_n = g_cycle ? n : 0;
  if (!g_cycle) return nullptr;
  for (int64_t i = 0; i < n; i++) g_cycle[i] = (uint32_t)i;
  uint64_t x = 0x243F6A8885A308D3ull;  // splitmix64, a fixed seed: every PE builds the same cycle
  for (int64_t i = n - 1; i > 0; i--) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    int64_t j = (int64_t)(z % (uint64_t)i);  // Sattolo: j < i, so the result is one cycle
    uint32_t t = g_cycle[i];
    g_cycle[i] = g_cycle[j];
    g_cycle[j] = t;
  }
  return g_cycle;
}

// chain_walk is where hops steps from block start end.
static int64_t chain_walk(int64_t start, int64_t hops, int64_t n) {
  const uint32_t *c = cycle_of(n);
  int64_t k = start;
  for (int64_t i = 0; c && i < hops; i++) k = c[k];
  return k;
}

__global__ void k_chain_words(uint8_t *b, int64_t stride, const uint32_t *next, int64_t n) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    *(uint64_t *)(b + k * stride) = next[k];
}

// k_touch reads one word of every line of b into the L2 (not the L1).
__global__ void k_touch(const uint8_t *b, int64_t bytes, unsigned long long *sink) {
  unsigned long long acc = 0;
  for (int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 128; i < bytes; i += (int64_t)gridDim.x * blockDim.x * 128)
    acc += __ldcg((const unsigned long long *)(b + i));
  if (acc == 0x5A5A5A5A5A5A5A5Aull) *sink = acc;  // keep the loads
}

// l2_flush writes three L2s of other lines (the scratch buffer): what was
// in this GPU's L2 is evicted.
static int l2_flush(void) {
  int64_t flush = 3 * S.l2 < S.buf ? 3 * S.l2 : S.buf;
  CK(cudaMemsetAsync(S.scratch, 0x5A, flush, S.stream));
  return 0;
}

// chain_prepare writes this PE's chain into its source (the pattern of
// seed, the first word of each block the next index) and leaves the L2
// flushed (memory-served) or holding the chain (cache-served). Local; every
// PE makes its own, as every PE's memory may be chased.
static int chain_prepare(const Chain &c, int64_t seed) {
  const uint32_t *cyc = cycle_of(c.n);
  if (!cyc) return fail(NB_ERR, "no host memory for a chain of %lld blocks", (long long)c.n);
  k_fill<<<1024, 256, 0, S.stream>>>(S.src, c.n * c.stride, S.me, seed);
  CKLAUNCH("chain fill");
  // The cycle travels through the scratch buffer (4 bytes a block, far less
  // than the chain's stride) before it is laid into the blocks.
  CK(cudaMemcpyAsync(S.scratch, cyc, c.n * sizeof(uint32_t), cudaMemcpyHostToDevice, S.stream));
  k_chain_words<<<1024, 256, 0, S.stream>>>(S.src, c.stride, (const uint32_t *)S.scratch, c.n);
  CKLAUNCH("chain kernel");
  if (c.warm) {
    k_touch<<<264, 256, 0, S.stream>>>(S.src, c.n * c.stride, S.count);
    CKLAUNCH("chain warm-up");
    return 0;
  }
  return l2_flush();
}

// The first word of a delivered block is next; the rest is src_pe's pattern
// at the block's offset base.
__global__ void k_check_block(const uint8_t *b, int64_t size, int64_t base, uint64_t next, int pe, int64_t seed,
                              unsigned long long *cnt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < size; i += (int64_t)gridDim.x * blockDim.x) {
    uint8_t want = i < 8 ? (uint8_t)(next >> (8 * i)) : pat(base + i, pe, seed);
    if (b[i] != want) mismatch(cnt, i);
  }
}

// chain_check_block checks that dst holds the block a walk of hops steps
// from block 0 of src_pe's chain delivered last.
static int chain_check_block(const Chain &c, const uint8_t *dst, int64_t size, int64_t hops, int src_pe, int64_t seed, nb_result *res) {
  if (hops <= 0) return 0;
  int64_t last = chain_walk(0, hops - 1, c.n);
  int64_t next = chain_walk(last, 1, c.n);
  return counted(
      size, res,
      [&](unsigned long long *cnt) { k_check_block<<<256, 256, 0, S.stream>>>(dst, size, last * c.stride, (uint64_t)next, src_pe, seed, cnt); },
      [&](unsigned long long first, unsigned long long) {
        snprintf(res->detail, sizeof res->detail, "byte %llu of chain block %lld (hop %lld) wrong", first, (long long)last, (long long)hops);
      });
}

// chain_check_cursor checks that a walk of hops steps from block 0 stands
// where the chase's cursor says (the floors keep no payload).
static int chain_check_cursor(const Chain &c, int64_t hops, nb_result *res) {
  int64_t got = 0;
  CK(cudaMemcpy(&got, S.cursor, sizeof got, cudaMemcpyDeviceToHost));
  int64_t want = chain_walk(0, hops, c.n);
  res->checked += 1;
  if (got != want) {
    res->errors += 1;
    if (!res->detail[0])
      snprintf(res->detail, sizeof res->detail, "after %lld hops the chase stands at block %lld, the chain says %lld", (long long)hops,
               (long long)got, (long long)want);
  }
  return 0;
}
