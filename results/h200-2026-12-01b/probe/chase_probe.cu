// chase_probe.cu: what a dependent load costs on this GPU, measured plainly,
// beside the loop shapes nvshbench's floor kernel could take; and whether a
// copy kernel whose grid is not co-resident reads its working set from the
// L2 (the 2403 GB/s LSA put on one H200). Built and run by ../session.sh.
//   nvcc -O3 -arch=sm_90 -o chase_probe chase_probe.cu
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <vector>
#include <algorithm>
#include <string.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static uint64_t sm64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Sattolo: one cycle over n nodes.
static std::vector<uint32_t> cycle(int64_t n) {
  std::vector<uint32_t> c(n);
  for (int64_t i = 0; i < n; i++) c[i] = (uint32_t)i;
  uint64_t x = 0x243F6A8885A308D3ull;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(sm64(x) % (uint64_t)i);
    uint32_t t = c[i]; c[i] = c[j]; c[j] = t;
  }
  return c;
}

__device__ static inline uint64_t gt() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory"); return t; }

// The plain chase: one thread, p = *p, one 8-byte load a node.
__global__ void k_plain(uint64_t **start, int64_t hops, uint64_t **out) {
  uint64_t *p = (uint64_t *)*start;
  for (int64_t i = 0; i < hops; i++) p = (uint64_t *)__ldcg((const unsigned long long *)p);
  *out = p;
}

// Index chase (the chain's words are block indices), one thread; a stamp
// every `every` hops (0: none).
__global__ void k_index(const uint8_t *chain, int64_t stride, int64_t n, int64_t hops, int every, int64_t *cursor, int64_t *times) {
  int64_t cur = *cursor;
  for (int64_t i = 0; i < hops; i++) {
    if (every && i % every == 0) times[i / every] = (int64_t)gt();
    uint64_t nx = __ldcg((const unsigned long long *)(chain + cur * stride));
    cur = nx < (uint64_t)n ? (int64_t)nx : 0;
  }
  *cursor = cur;
}

// nvshbench's floor as of 53d8fe9 (latency.cuh chase + k_lat_chase): a
// stamp, the load, the cursor through shared memory and a __syncthreads a hop.
__global__ void k_current(const uint8_t *chain, int64_t stride, int64_t n, int64_t hops, int64_t *cursor, int64_t *times) {
  __shared__ volatile int64_t cur;
  if (threadIdx.x == 0) cur = *cursor;
  __syncthreads();
  for (int64_t it = 0; it < hops; it++) {
    if (threadIdx.x == 0) times[it] = (int64_t)gt();
    uint64_t first = __ldcg((const unsigned long long *)(chain + cur * stride));
    if (threadIdx.x == 0) cur = first < (uint64_t)n ? (int64_t)first : 0;
    __syncthreads();
  }
  if (threadIdx.x == 0) *cursor = cur;
}

__global__ void k_ptrs(uint8_t *base, int64_t stride, const uint32_t *next, int64_t n, int asptr) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    *(uint64_t *)(base + k * stride) = asptr ? (uint64_t)(base + (int64_t)next[k] * stride) : next[k];
}

__global__ void k_touch(const uint8_t *b, int64_t bytes, unsigned long long *sink) {
  unsigned long long acc = 0;
  for (int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 128; i < bytes; i += (int64_t)gridDim.x * blockDim.x * 128)
    acc += __ldcg((const unsigned long long *)(b + i));
  if (acc == 0x5A5A5A5A5A5A5A5Aull) *sink = acc;
}

// Copies: a contiguous chunk per CTA (k_lsa_bulk's shape) or grid-strided
// (k_copy's), 4 x 16 B in flight a thread, a system fence an iteration.
__global__ void k_chunk(uint8_t *dst, const uint8_t *src, int64_t size, int iters) {
  int64_t c = ((size + gridDim.x - 1) / gridDim.x + 15) & ~15ll;
  int64_t off = blockIdx.x * c, len = off >= size ? 0 : (off + c <= size ? c : size - off);
  const uint4 *s4 = (const uint4 *)(src + off);
  uint4 *d4 = (uint4 *)(dst + off);
  int64_t n16 = len / 16, w = blockDim.x;
  for (int it = 0; it < iters; it++) {
    int64_t i = threadIdx.x;
    for (; i + 3 * w < n16; i += 4 * w) {
      uint4 a = s4[i], b = s4[i + w], cc = s4[i + 2 * w], d = s4[i + 3 * w];
      d4[i] = a; d4[i + w] = b; d4[i + 2 * w] = cc; d4[i + 3 * w] = d;
    }
    for (; i < n16; i += w) d4[i] = s4[i];
    __threadfence_system();
  }
}

__global__ void k_strided(uint8_t *dst, const uint8_t *src, int64_t size, int iters) {
  int64_t n16 = size / 16, t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, st = (int64_t)gridDim.x * blockDim.x;
  const uint4 *s4 = (const uint4 *)src;
  uint4 *d4 = (uint4 *)dst;
  for (int it = 0; it < iters; it++) {
    int64_t i = t;
    for (; i + 3 * st < n16; i += 4 * st) {
      uint4 a = s4[i], b = s4[i + st], c = s4[i + 2 * st], d = s4[i + 3 * st];
      d4[i] = a; d4[i + st] = b; d4[i + 2 * st] = c; d4[i + 3 * st] = d;
    }
    for (; i < n16; i += st) d4[i] = s4[i];
    __threadfence_system();
  }
}

static cudaEvent_t e0, e1;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  int64_t big = 1ll << 30;  // the memory-served chains: 1 GiB (> 4 x L2)
  uint8_t *chain, *flush;
  CK(cudaMalloc(&chain, big));
  CK(cudaMalloc(&flush, 3ll * l2));
  uint64_t **dstart, **dout;
  int64_t *cursor, *times;
  unsigned long long *sink;
  uint32_t *dnext;
  CK(cudaMalloc(&dstart, 8));
  CK(cudaMalloc(&dout, 8));
  CK(cudaMalloc(&cursor, 8));
  CK(cudaMalloc(&times, 8 << 20));
  CK(cudaMalloc(&sink, 8));
  CK(cudaMalloc(&dnext, (big / 128) * 4));
  printf("# L2 %d bytes\n", l2);
  printf("kind,stride_B,chain_B,served,hops,ns_per_hop_median,samples\n");
  struct Case { const char *kind; int64_t stride, bytes; int warm; };
  std::vector<Case> cases;
  for (int64_t stride : {128ll, 256ll}) {
    cases.push_back({"plain", stride, big, 0});
    cases.push_back({"plain", stride, 16ll << 20, 1});
  }
  for (int warm : {0, 1}) {
    int64_t bytes = warm ? (16ll << 20) : (256ll << 20);
    cases.push_back({"current", 128, bytes, warm});
    cases.push_back({"index-nostamp", 128, bytes, warm});
    cases.push_back({"index-stamp1", 128, bytes, warm});
    cases.push_back({"index-stamp16", 128, bytes, warm});
  }
  for (auto &c : cases) {
    int64_t n = c.bytes / c.stride;
    std::vector<uint32_t> cyc = cycle(n);
    CK(cudaMemcpy(dnext, cyc.data(), n * 4, cudaMemcpyHostToDevice));
    int asptr = c.kind[0] == 'p';
    k_ptrs<<<1024, 256>>>(chain, c.stride, dnext, n, asptr);
    uint64_t *s0 = (uint64_t *)chain;
    CK(cudaMemcpy(dstart, &s0, 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(cursor, 0, 8));
    CK(cudaDeviceSynchronize());
    int64_t hops = c.warm ? 200000 : 50000;
    std::vector<double> per;
    for (int s = 0; s < 7; s++) {
      if (c.warm) k_touch<<<264, 256>>>(chain, c.bytes, sink);
      else CK(cudaMemset(flush, s, 3ll * l2));
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0));
      if (asptr) k_plain<<<1, 1>>>(dstart, hops, dout);
      else if (!strcmp(c.kind, "current")) k_current<<<1, 1>>>(chain, c.stride, n, hops, cursor, times);
      else {
        int every = !strcmp(c.kind, "index-stamp1") ? 1 : (!strcmp(c.kind, "index-stamp16") ? 16 : 0);
        k_index<<<1, 1>>>(chain, c.stride, n, hops, every, cursor, times);
      }
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (asptr) CK(cudaMemcpy(dstart, dout, 8, cudaMemcpyDeviceToDevice));  // continue the walk
      if (s > 0) per.push_back(ms * 1e6 / hops);
    }
    printf("%s,%lld,%lld,%s,%lld,%.1f,%zu\n", c.kind, (long long)c.stride, (long long)c.bytes, c.warm ? "L2" : "memory", (long long)hops,
           median(per), per.size());
  }
  CK(cudaFree(chain));
  // Copies of 256 MiB on one GPU: chunk per CTA vs grid-strided, two grids.
  int64_t size = 256ll << 20;
  uint8_t *src, *dst;
  CK(cudaMalloc(&src, size));
  CK(cudaMalloc(&dst, size));
  CK(cudaMemset(src, 1, size));
  int sms = 0, occ = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_chunk, 1024, 0));
  printf("\n# %d SMs, %d CTAs of 1024 threads resident per SM\n", sms, occ);
  printf("kernel,ctas,threads,size_B,iters,GBps_median\n");
  for (int memcpy_ = 1; memcpy_ >= 0; memcpy_--) {
    if (memcpy_) {
      std::vector<double> v;
      for (int s = 0; s < 6; s++) {
        CK(cudaEventRecord(e0));
        for (int i = 0; i < 10; i++) CK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (s) v.push_back(10.0 * size / (ms * 1e-3) / 1e9);
      }
      printf("cudaMemcpy,0,0,%lld,10,%.1f\n", (long long)size, median(v));
      continue;
    }
    for (int kind = 0; kind < 2; kind++)
      for (int ctas : {sms * 8, sms * 4, sms * occ, sms}) {
        int iters = 20;
        std::vector<double> v;
        for (int s = 0; s < 6; s++) {
          CK(cudaEventRecord(e0));
          if (kind == 0) k_chunk<<<ctas, 1024>>>(dst, src, size, iters);
          else k_strided<<<ctas, 1024>>>(dst, src, size, iters);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          float ms;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          if (s) v.push_back((double)iters * size / (ms * 1e-3) / 1e9);
        }
        printf("%s,%d,1024,%lld,%d,%.1f\n", kind == 0 ? "chunk-per-CTA" : "grid-strided", ctas, (long long)size, iters, median(v));
      }
  }
  return 0;
}
