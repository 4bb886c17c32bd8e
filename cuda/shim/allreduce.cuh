// allreduce.cuh: our multi-CTA device AllReduce (float sum over memory
// every PE can load and store), one template for NVSHMEM and for NCCL's
// device API: what differs between them is where the peers' pointers come
// from (Peers: nvshmem_ptr on the host, or ncclGetLsaPointer in the kernel)
// and how CTA b of every PE meets CTA b of the others (Barrier: NVSHMEM
// signal words, or an NCCL LSA barrier session). The algorithm is the same:
// one-shot (CTA b sums slice b of every PE's source into the local output)
// or two-shot (reduce-scatter of PE p's chunk into its scratch, then an
// all-gather of every chunk from its owner's scratch).

struct PeerPtrs {
  const float *p[NB_MAX_PES];
};

// sum_range: dst[i] = sum over PEs of src.p[q][i] for i in [lo, hi), with
// 16-byte loads where the range allows (lo is a multiple of 4 elements),
// four vectors of every PE in flight per thread before the first add (the
// loads, not the adds, bound it: one vector in flight per PE reaches a
// third of NVLink's read rate with a full grid).
__device__ static inline void sum_range(float *dst, const PeerPtrs &src, int npes, int64_t lo, int64_t hi) {
  int64_t v4 = lo + ((hi - lo) & ~3ll);
  int64_t w = 4 * (int64_t)blockDim.x;  // elements one pass of the CTA covers
  int64_t i = lo + 4 * threadIdx.x;
  for (; i + 3 * w < v4; i += 4 * w) {
    float4 acc[4] = {};
    for (int q = 0; q < npes; q++) {
      float4 x[4];
#pragma unroll
      for (int u = 0; u < 4; u++) x[u] = __ldcg((const float4 *)(src.p[q] + i + u * w));  // L2 only: never an L1 hit
#pragma unroll
      for (int u = 0; u < 4; u++) acc[u].x += x[u].x, acc[u].y += x[u].y, acc[u].z += x[u].z, acc[u].w += x[u].w;
    }
#pragma unroll
    for (int u = 0; u < 4; u++) *(float4 *)(dst + i + u * w) = acc[u];
  }
  for (; i < v4; i += w) {
    float4 acc = make_float4(0, 0, 0, 0);
    for (int q = 0; q < npes; q++) {
      float4 x = __ldcg((const float4 *)(src.p[q] + i));
      acc.x += x.x, acc.y += x.y, acc.z += x.z, acc.w += x.w;
    }
    *(float4 *)(dst + i) = acc;
  }
  for (int64_t j = v4 + threadIdx.x; j < hi; j += blockDim.x) {
    float acc = 0;
    for (int q = 0; q < npes; q++) acc += __ldcg(src.p[q] + j);
    dst[j] = acc;
  }
}

// copy_range: dst[i] = src[i] for i in [lo, hi), 16-byte loads where possible.
__device__ static inline void copy_range(float *dst, const float *src, int64_t lo, int64_t hi) {
  int64_t v4 = lo + ((hi - lo) & ~3ll);
  for (int64_t i = lo + 4 * threadIdx.x; i < v4; i += 4 * blockDim.x) *(float4 *)(dst + i) = __ldcg((const float4 *)(src + i));
  for (int64_t i = v4 + threadIdx.x; i < hi; i += blockDim.x) dst[i] = __ldcg(src + i);
}

// --- NVSHMEM: peers from nvshmem_ptr (resolved on the host, passed in the
// kernel's arguments), CTA b meeting through signal words.

struct NvshmemPeers {
  PeerPtrs src, scratch;
  int me, npes;
  __device__ void resolve(PeerPtrs &s, PeerPtrs &c) const {
    for (int q = threadIdx.x; q < npes; q += blockDim.x) s.p[q] = src.p[q], c.p[q] = scratch.p[q];
  }
  __device__ int rank() const { return me; }
  __device__ int size() const { return npes; }
};

// CTA b of every PE meets CTA b of every other PE at an epoch: what each
// wrote before is visible to the others after. Each CTA keeps its epoch in
// device memory (epochs[blockIdx.x]), so a launch replayed from a CUDA graph,
// or the next launch of a per-operation run, continues the sequence instead
// of reusing epochs its peers already passed. Every PE runs the same
// launches, so the epochs stay in step.
struct NvshmemBarrier {
  uint64_t *flags, *epochs;
  int me, npes;
  struct Session {
    const NvshmemBarrier &b;
    uint64_t e;
    __device__ explicit Session(const NvshmemBarrier &bar) : b(bar) {
      __shared__ uint64_t e0;
      if (threadIdx.x == 0) e0 = b.epochs[blockIdx.x];
      __syncthreads();
      e = e0;
    }
    __device__ void sync() {
      ++e;
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence_system();
        int blk = blockIdx.x;
        for (int q = 0; q < b.npes; q++)
          if (q != b.me) nvshmemx_signal_op(b.flags + (size_t)b.me * NB_MAX_CTAS + blk, e, NVSHMEM_SIGNAL_SET, q);
        for (int q = 0; q < b.npes; q++)
          if (q != b.me) nvshmem_signal_wait_until(b.flags + (size_t)q * NB_MAX_CTAS + blk, NVSHMEM_CMP_GE, e);
      }
      __syncthreads();
    }
    __device__ void end() {
      if (threadIdx.x == 0) b.epochs[blockIdx.x] = e;
    }
  };
};

// The AllReduce: iters operations in this launch (one per launch when run
// one operation per launch). Every CTA must be resident (the barriers spin).
template <class Peers, class Barrier, int TWOSHOT>
__global__ void k_multicta(float *dst, Peers peers, Barrier barrier, int64_t n, int iters, int64_t *st) {
  __shared__ PeerPtrs src, scr;
  peers.resolve(src, scr);
  __syncthreads();
  const int me = peers.rank(), npes = peers.size();
  typename Barrier::Session bar(barrier);
  stamp_begin(st);
  if constexpr (!TWOSHOT) {
    int64_t per = (n + gridDim.x - 1) / gridDim.x;
    per = (per + 3) & ~3ll;
    int64_t lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
    for (int it = 0; it < iters; it++) {
      bar.sync();
      if (lo < hi) sum_range(dst, src, npes, lo, hi);
    }
  } else {
    float *mine = (float *)scr.p[me];
    int64_t chunk = (n + npes - 1) / npes;
    chunk = (chunk + 3) & ~3ll;
    int64_t per = (chunk + gridDim.x - 1) / gridDim.x;
    per = (per + 3) & ~3ll;
    for (int it = 0; it < iters; it++) {
      bar.sync();
      {  // reduce-scatter: this PE's chunk
        int64_t lo = me * chunk + blockIdx.x * per;
        int64_t end = (me + 1) * chunk < n ? (me + 1) * chunk : n;
        int64_t hi = lo + per < end ? lo + per : end;
        if (lo < hi) sum_range(mine, src, npes, lo, hi);
      }
      bar.sync();
      for (int q = 0; q < npes; q++) {  // all-gather: every PE's chunk from its scratch
        int64_t lo = q * chunk + blockIdx.x * per;
        int64_t end = (q + 1) * chunk < n ? (q + 1) * chunk : n;
        int64_t hi = lo + per < end ? lo + per : end;
        if (lo < hi) copy_range(dst, scr.p[q], lo, hi);
      }
    }
  }
  stamp_end_of(st, iters);
  bar.end();
}
