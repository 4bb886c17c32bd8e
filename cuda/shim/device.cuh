// device.cuh: the device helpers the families share: how a scope's groups
// cut a buffer into chunks (bulk put/get through NVSHMEM and through NCCL's
// LSA pointers), the copy loop of a group, and the one-CTA pointer chase of
// the round trips (NVSHMEM's gets and NCCL's LSA loads).

// Bulk put/get: the buffer is cut into one chunk per group (CTA, warp or
// thread), 16-byte aligned; the last chunks take the remainder, so every
// byte of size moves (perftest drops remainders).
__host__ __device__ static inline int64_t chunk_bytes(int64_t size, int64_t groups) {
  int64_t c = (size + groups - 1) / groups;
  return (c + 15) & ~15ll;
}

__device__ static inline void chunk_of(int64_t size, int64_t groups, int64_t g, int64_t *off, int64_t *len) {
  int64_t c = chunk_bytes(size, groups);
  int64_t o = g * c;
  if (o >= size) {
    *off = size;
    *len = 0;
    return;
  }
  *off = o;
  *len = (o + c <= size) ? c : size - o;
}

__device__ static inline void group_of(int scope, int64_t *groups, int64_t *g) {
  if (scope == NB_SCOPE_BLOCK) {
    *groups = gridDim.x;
    *g = blockIdx.x;
  } else if (scope == NB_SCOPE_WARP) {
    *groups = (int64_t)gridDim.x * (blockDim.x / 32);
    *g = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  } else {
    *groups = (int64_t)gridDim.x * blockDim.x;
    *g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  }
}

template <int SCOPE>
__device__ static inline void lane_of(int *lane, int *width) {
  if (SCOPE == NB_SCOPE_BLOCK) *lane = threadIdx.x, *width = blockDim.x;
  else if (SCOPE == NB_SCOPE_WARP) *lane = threadIdx.x % 32, *width = 32;
  else *lane = 0, *width = 1;
}

// group_copy: the threads lane, lane + width, ... of one scope group copy
// len bytes (dst and src 16-byte aligned): four 16-byte loads in flight per
// thread, then the stores, then a byte tail. Four loads in flight is what
// reaches NVLink's limit with a full grid (one, as NVSHMEM's P2P copy keeps,
// gives a third of it for reads). The NCCL device API kernels use it.
__device__ static inline void group_copy(uint8_t *__restrict__ dst, const uint8_t *__restrict__ src, int64_t len, int lane, int width) {
  int64_t n16 = len / 16;
  const uint4 *s4 = (const uint4 *)src;
  uint4 *d4 = (uint4 *)dst;
  int64_t i = lane;
  for (; i + 3 * width < n16; i += 4 * width) {
    uint4 a = s4[i], b = s4[i + width], c = s4[i + 2 * width], d = s4[i + 3 * width];
    d4[i] = a;
    d4[i + width] = b;
    d4[i + 2 * width] = c;
    d4[i + 3 * width] = d;
  }
  for (; i < n16; i += width) d4[i] = s4[i];
  for (int64_t j = n16 * 16 + lane; j < len; j += width) dst[j] = src[j];
}

// group_copy1: NVSHMEM's P2P copy loop for 16-byte aligned buffers
// (nvshmemi_memcpy_threadgroup): a 16-byte load and its store an
// iteration, one load in flight a thread (dst and src may alias, so no
// later load is issued before an earlier store; no unrolling), then a byte
// tail.
__device__ static inline void group_copy1(uint8_t *dst, const uint8_t *src, int64_t len, int64_t lane, int64_t width) {
  int64_t n16 = len / 16;
  const uint4 *s4 = (const uint4 *)src;
  uint4 *d4 = (uint4 *)dst;
#pragma unroll 1
  for (int64_t i = lane; i < n16; i += width) d4[i] = s4[i];
  for (int64_t j = n16 * 16 + lane; j < len; j += width) dst[j] = src[j];
}

// chase runs a pointer chase of one CTA: iteration it fetches block cur of
// the peer's chain with hop(cur), which every thread calls and which ends
// with the CTA synchronised and returns, on thread 0, the block's first
// word: the index of the next block, so iteration it + 1 cannot begin
// before it's data arrived. Thread 0 stamps every hop's start.
// The cursor continues across launches (the chain is never re-walked from
// its start, where a cache could answer).
template <typename Hop>
__device__ static inline void chase(int64_t *cursor, int64_t n, int iters, int64_t *times, Hop hop) {
  __shared__ volatile int64_t cur;
  if (threadIdx.x == 0) cur = *cursor;
  __syncthreads();
  for (int it = 0; it < iters; it++) {
    stamp(times, it);
    uint64_t first = hop(cur);
    if (threadIdx.x == 0) cur = first < (uint64_t)n ? (int64_t)first : 0;  // a damaged word stays inside the chain (the check sees it)
    __syncthreads();
  }
  stamp(times, iters);
  if (threadIdx.x == 0) *cursor = cur;
}

// spin_ge waits until the word at p holds v or more, in a system-scope
// acquire loop (a flag another PE or CTA stores to; the loads after it see
// what was written before that store).
__device__ static inline void spin_ge(uint64_t *p, uint64_t v) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> x(*p);
  while (x.load(cuda::memory_order_acquire) < v) {
  }
}
