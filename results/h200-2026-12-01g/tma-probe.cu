// tma-probe.cu: results/h200-2026-12-01f/tma-probe/probe.cu (why TMA bulk
// copies on 1-16 SMs ran about 2x slower beside a compute kernel, issue 32,
// results/h200-2026-12-01e) with what the sixth session asks of it: TMA read
// 25 GB/s on one SM from two nvshmem_malloc buffers and 50 from cudaMalloc or
// cuMemCreate ones, alone too. Added: the source's and the destination's
// memory named apart (src=, dst=), both carved from one allocation at a gap
// (layout=one gap=BYTES), NVSHMEM initialised beside other memory (init=1),
// the sizes of the quick cases (sizes=), and a pointer chase over each
// buffer (chase=1: one thread's dependent loads at strides 4 KiB, 64 KiB and
// 2 MiB, second pass, so the lines sit in L2 and what is left is address
// translation: a page smaller than the stride shows as a slower hop).
// The original header:
// probe.cu: why TMA bulk copies on 1-16 SMs run about 2x slower beside a
// compute kernel (issue 32, results/h200-2026-12-01e). A standalone copy of
// the bytes-per-SM launch shape (one 512-thread CTA an SM, 128 KiB of shared
// memory, TMA through 8 stages of 16 KiB, or 16-byte SM stores), same-GPU
// memory, with the partner CTAs varied one thing at a time:
//   alone      grid = budget
//   fma        grid = budget + c, c CTAs run an FMA loop until the transfer ends
//   exit       grid = budget + c, the c CTAs return at once
//   spin       grid = budget + c, the c CTAs only poll the done counter
//   sib        grid = 132, only the CTA on the transfer CTA's TPC sibling SM computes
//   nosib      grid = 132, every CTA but the sibling's computes
// each launched cooperatively ("coop") or not ("plain"). Per case: GB/s by the
// events timer (median of reps launches), the transfer CTA 0's SM clock over
// its run (clock64 / globaltimer), its SM id, and the partners' mean clock.
// Every transfer's destination is checked against the source after the case.
#include <cuda.h>
#include <cuda_runtime.h>
#ifdef WITH_NVSHMEM
#include <nvshmem.h>
#include <nvshmemx.h>
#endif
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

#define THREADS 512
#define TILE (16 << 10)
#define STAGES 8
#define SMEM (STAGES * TILE + 128 + 128)  // + slack for align=1

enum { P_FMA = 0, P_EXIT = 1, P_SPIN = 2, P_SIB = 3, P_NOSIB = 4 };

struct P {
  uint8_t *dst;
  const uint8_t *src;
  long long size;
  int iters, budget, partner, tma, fence, align;
  unsigned long long *done;
  int *tsm;               // the transfer CTA 0's SM id, published before it starts (-1 until then)
  long long *stamp;       // per CTA: [0] clock begin, [1] clock end, [2] ns begin, [3] ns end, [4] smid, [5] iterations
  float *out;
  float m1, one;
};

__device__ static inline unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ static inline unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ static inline uint32_t s32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ static void mbar_wait(uint64_t *bar, uint32_t parity) {
  uint32_t ok = 0;
  while (!ok)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(s32(bar)), "r"(parity)
                 : "memory");
}

__device__ static void tma_copy(uint8_t *dst, const uint8_t *src, long long len, uint8_t *smem, uint64_t *bars, uint32_t &ph) {
  long long n = (len + TILE - 1) / TILE;
  auto bytes = [&](long long t) { return (uint32_t)(len - t * TILE < TILE ? len - t * TILE : TILE); };
  auto load = [&](long long t) {
    int s = (int)(t % STAGES);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(s32(bars + s)), "r"(bytes(t)) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     s32(smem + s * TILE)),
                 "l"(src + t * TILE), "r"(bytes(t)), "r"(s32(bars + s))
                 : "memory");
  };
  for (long long t = 0; t < n && t < STAGES; t++) load(t);
  for (long long t = 0; t < n; t++) {
    int s = (int)(t % STAGES);
    mbar_wait(bars + s, (ph >> s) & 1);
    ph ^= 1u << s;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + t * TILE), "r"(s32(smem + s * TILE)),
                 "r"(bytes(t))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (t >= 1 && t - 1 + STAGES < n) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load(t - 1 + STAGES);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

__device__ static void st_copy(uint8_t *dst, const uint8_t *src, long long len) {
  const int4 *s = (const int4 *)src;
  int4 *d = (int4 *)dst;
  long long n = len / 16;
  long long i = threadIdx.x;
  for (; i + 3 * THREADS < n; i += 4 * THREADS) {
    int4 a = s[i], b = s[i + THREADS], c = s[i + 2 * THREADS], e = s[i + 3 * THREADS];
    d[i] = a, d[i + THREADS] = b, d[i + 2 * THREADS] = c, d[i + 3 * THREADS] = e;
  }
  for (; i < n; i += THREADS) d[i] = s[i];
}

__global__ void __launch_bounds__(THREADS, 1) k(P p) {
  extern __shared__ __align__(128) uint8_t dyn[];
  // align=1: the stages from the first 128-byte-aligned byte (a -rdc build
  // places dyn 16 bytes past one, after the static int below)
  // (the address made opaque: the compiler believes the __align__(128) and
  // would fold the mask to 0, as call B's first run of this option did)
  uint32_t a = s32(dyn);
  asm volatile("" : "+r"(a));
  uint8_t *sm = p.align ? dyn + ((128 - (a & 127)) & 127) : dyn;
  long long *st = p.stamp + 8 * blockIdx.x;
  if (threadIdx.x == 0) st[0] = clock64(), st[2] = gtime(), st[4] = smid(), st[6] = s32(sm);
  if ((int)blockIdx.x < p.budget) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.tsm, (int)smid());
    uint64_t *bars = (uint64_t *)(sm + STAGES * TILE);
    if (p.tma && threadIdx.x == 0) {
      for (int s = 0; s < STAGES; s++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(s32(bars + s)) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    long long per = (p.size / p.budget + 15) / 16 * 16;
    long long off = per * blockIdx.x, len = per < p.size - off ? per : p.size - off;
    uint32_t ph = 0;
    for (int it = 0; it < p.iters && len > 0; it++) {
      if (p.tma) {
        if (threadIdx.x == 0) {
          tma_copy(p.dst + off, p.src + off, len, sm, bars, ph);
          if (p.fence) __threadfence_system();
        }
        __syncthreads();
      } else {
        st_copy(p.dst + off, p.src + off, len);
        __syncthreads();
      }
    }
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(p.done, 1ull);
    }
  } else {
    int role = p.partner;
    if (role == P_SIB || role == P_NOSIB) {
      __shared__ int t;
      if (threadIdx.x == 0) {
        while ((t = *(volatile int *)p.tsm) < 0) {
        }
      }
      __syncthreads();
      bool sib = (smid() >> 1) == ((unsigned)t >> 1) && smid() != (unsigned)t;
      if ((role == P_SIB) != sib) role = P_EXIT;
      else role = P_FMA;
    }
    long long n = 0;
    if (role == P_FMA) {
      float acc[8];
      for (int j = 0; j < 8; j++) acc[j] = 0.5f * (float)((threadIdx.x * 8 + j) % 251);
      do {
#pragma unroll 16
        for (int s = 0; s < 256; s++)
#pragma unroll
          for (int j = 0; j < 8; j++) acc[j] = fmaf(acc[j], p.m1, 0.0f);
        for (int j = 0; j < 8; j++) acc[j] += p.one;
        n++;
      } while (!__syncthreads_or(threadIdx.x == 0 && *(volatile unsigned long long *)p.done >= (unsigned long long)p.budget));
      float sum = 0;
      for (int j = 0; j < 8; j++) sum += acc[j];
      p.out[blockIdx.x * THREADS + threadIdx.x] = sum;
    } else if (role == P_SPIN) {
      while (!__syncthreads_or(threadIdx.x == 0 && *(volatile unsigned long long *)p.done >= (unsigned long long)p.budget)) n++;
    }
    if (threadIdx.x == 0) st[5] = n;
  }
  if (threadIdx.x == 0) st[1] = clock64(), st[3] = gtime();
}

// kchase: one thread. Pass 1 writes a ring of hops (each word the next
// hop's offset), pass 2 and 3 follow it; pass 3 is timed: ns a hop.
__global__ void kchase(uint8_t *buf, long long bytes, long long stride, int hops, long long *out) {
  long long n = bytes / stride < hops ? bytes / stride : hops;
  for (long long i = 0; i < n; i++) *(volatile long long *)(buf + i * stride) = ((i + 1) % n) * stride;
  __threadfence();
  long long o = 0;
  for (long long i = 0; i < n; i++) o = *(volatile long long *)(buf + o);
  unsigned long long t0 = gtime();
  for (long long i = 0; i < n; i++) o = *(volatile long long *)(buf + o);
  unsigned long long t1 = gtime();
  out[0] = (long long)(t1 - t0);
  out[1] = n;
  out[2] = o;
}

__global__ void kcheck(const uint8_t *a, const uint8_t *b, long long n, unsigned long long *bad) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n / 8; i += (long long)gridDim.x * blockDim.x)
    if (((const uint64_t *)a)[i] != ((const uint64_t *)b)[i]) atomicAdd(bad, 1ull);
}

// Memory: "cuda" (cudaMalloc), "vmm" (cuMemCreate + cuMemMap, 2 MiB
// granularity, one mapping holding source, destination and scratch, as
// NVSHMEM's heap does), "nvshmem" (nvshmem_malloc on one PE; a build with
// -DWITH_NVSHMEM).
static uint8_t *vmm_alloc(size_t bytes) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.allocFlags.gpuDirectRDMACapable = 1;
  size_t gran = 0;
  if (cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS) exit(3);
  bytes = (bytes + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle h;
  CUdeviceptr p;
  if (cuMemCreate(&h, bytes, &prop, 0) != CUDA_SUCCESS) exit(4);
  if (cuMemAddressReserve(&p, bytes, 0, 0, 0) != CUDA_SUCCESS) exit(5);
  if (cuMemMap(p, bytes, 0, h, 0) != CUDA_SUCCESS) exit(6);
  CUmemAccessDesc a = {};
  a.location = prop.location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemSetAccess(p, bytes, &a, 1) != CUDA_SUCCESS) exit(7);
  fprintf(stderr, "vmm: %zu bytes, granularity %zu\n", bytes, gran);
  return (uint8_t *)p;
}

int main(int argc, char **argv) {
  const char *mem = "cuda", *cases = "all", *srcmem = nullptr, *dstmem = nullptr, *sizes = "256M";
  int fence = 0, nonblocking = 0, init = 0, layout_one = 0, chase = 0, align = 0;
  long long gap = 0;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "mem=", 4)) mem = argv[i] + 4;
    else if (!strncmp(argv[i], "fence=", 6)) fence = atoi(argv[i] + 6);
    else if (!strncmp(argv[i], "stream=", 7)) nonblocking = !strcmp(argv[i] + 7, "nonblocking");
    else if (!strncmp(argv[i], "cases=", 6)) cases = argv[i] + 6;
    else if (!strncmp(argv[i], "src=", 4)) srcmem = argv[i] + 4;
    else if (!strncmp(argv[i], "dst=", 4)) dstmem = argv[i] + 4;
    else if (!strncmp(argv[i], "init=", 5)) init = atoi(argv[i] + 5);
    else if (!strncmp(argv[i], "layout=", 7)) layout_one = !strcmp(argv[i] + 7, "one");
    else if (!strncmp(argv[i], "gap=", 4)) gap = atoll(argv[i] + 4);
    else if (!strncmp(argv[i], "chase=", 6)) chase = atoi(argv[i] + 6);
    else if (!strncmp(argv[i], "align=", 6)) align = atoi(argv[i] + 6);
    else if (!strncmp(argv[i], "sizes=", 6)) sizes = argv[i] + 6;
    else {
      fprintf(stderr,
              "usage: probe [mem=cuda|vmm|nvshmem] [src=KIND] [dst=KIND] [layout=sep|one] [gap=BYTES] [init=0|1] [chase=0|1] [align=0|1]\n"
              "             [fence=0|1] [stream=default|nonblocking] [cases=all|quick] [sizes=256M,1M]\n");
      return 2;
    }
  }
  if (!srcmem) srcmem = mem;
  if (!dstmem) dstmem = mem;
  if (gap % 16) {
    fprintf(stderr, "gap must be a multiple of 16\n");
    return 2;
  }
  long long maxsize = 256ll << 20;
  CK(cudaSetDevice(0));
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint8_t *src, *dst, *scr;
  size_t scrbytes = 1 << 20;
#ifdef WITH_NVSHMEM
  bool nv_up = false;
#endif
  auto nv_init = [&]() {
#ifdef WITH_NVSHMEM
    if (nv_up) return;
    nvshmemx_uniqueid_t id;
    nvshmemx_get_uniqueid(&id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) exit(8);
    nv_up = true;
#else
    fprintf(stderr, "nvshmem: built without -DWITH_NVSHMEM\n");
    exit(2);
#endif
  };
  auto alloc = [&](const char *kind, size_t bytes) -> uint8_t * {
    uint8_t *p = nullptr;
    if (!strcmp(kind, "vmm")) return vmm_alloc(bytes);
    if (!strcmp(kind, "nvshmem")) {
      nv_init();
#ifdef WITH_NVSHMEM
      p = (uint8_t *)nvshmem_malloc(bytes);
      if (!p) exit(9);
      p = (uint8_t *)nvshmem_ptr(p, 0);
#endif
      return p;
    }
    if (strcmp(kind, "cuda")) {
      fprintf(stderr, "unknown memory %s\n", kind);
      exit(2);
    }
    CK(cudaMalloc(&p, bytes));
    return p;
  };
  if (init) nv_init();
  if (layout_one) {
    uint8_t *b = alloc(srcmem, 2 * maxsize + gap + scrbytes);
    src = b, dst = b + maxsize + gap, scr = b + 2 * maxsize + gap;
  } else {
    src = alloc(srcmem, maxsize);
    dst = alloc(dstmem, maxsize);
    scr = alloc(!strcmp(srcmem, "nvshmem") ? "nvshmem" : "cuda", scrbytes);
  }
  fprintf(stderr, "src %p (%s) dst %p (%s) dst-src %lld\n", (void *)src, srcmem, (void *)dst, layout_one ? srcmem : dstmem,
          (long long)(dst - src));
  cudaStream_t stream = 0;
  if (nonblocking) CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<uint64_t> h(maxsize / 8);
  for (size_t i = 0; i < h.size(); i++) h[i] = i * 0x9E3779B97F4A7C15ull + 1;
  unsigned long long *done = (unsigned long long *)scr, *bad;
  int *tsm = (int *)(scr + 4096);
  long long *stamp;
  float *out;
  CK(cudaMalloc(&bad, 8));
  CK(cudaMalloc(&stamp, 8 * 8 * 1024));
  CK(cudaMalloc(&out, 4 * THREADS * 1024));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  char memname[96];
  snprintf(memname, sizeof memname, "%s>%s%s%s%s", srcmem, layout_one ? srcmem : dstmem, layout_one ? "/one" : "", init ? "/init" : "",
           align ? "/align" : "");
  mem = memname;
  if (chase) {
    long long *cout;
    CK(cudaMalloc(&cout, 3 * 8));
    for (int which = 0; which < 2; which++)
      for (long long stride : {4096ll, 65536ll, 2ll << 20}) {
        kchase<<<1, 1, 0, stream>>>(which ? src : dst, maxsize, stride, 4096, cout);
        CK(cudaGetLastError());
        long long h3[3];
        CK(cudaMemcpy(h3, cout, sizeof h3, cudaMemcpyDeviceToHost));
        printf("chase,%s,%s,stride=%lld,hops=%lld,ns_per_hop=%.1f\n", mem, which ? "src" : "dst", stride, h3[1], (double)h3[0] / (double)h3[1]);
      }
    // the chase wrote over the source: its pattern comes after
  }
  CK(cudaMemcpy(src, h.data(), maxsize, cudaMemcpyHostToDevice));
  printf("mem,fence,stream,mech,size,budget,partner,partners,launch,iters,gbps_median,gbps_min,gbps_max,t_sm_mhz,t_smid,partner_mhz,partner_iters_mean,ok,stages_mod128\n");
  auto run = [&](int tma, long long size, int budget, int partner, int partners, int coop, int iters, int reps) {
    P p{dst, src, size, iters, budget, partner, tma, fence, align, done, tsm, stamp, out, -1.0f, 1.0f};
    int grid = budget + partners;
    std::vector<double> g;
    double tmhz = 0, pmhz = 0, piters = 0;
    int tsmid = -1, np = 0;
    long long soff = -1;
    for (int r = 0; r < reps + 1; r++) {  // the first launch warms up
      CK(cudaMemsetAsync(done, 0, 8, stream));
      CK(cudaMemsetAsync(tsm, 0xff, 4, stream));
      CK(cudaMemsetAsync(dst, 0, size, stream));
      CK(cudaEventRecord(e0, stream));
      if (coop) {
        void *args[] = {&p};
        CK(cudaLaunchCooperativeKernel((void *)k, grid, THREADS, args, SMEM, stream));
      } else {
        k<<<grid, THREADS, SMEM, stream>>>(p);
        CK(cudaGetLastError());
      }
      CK(cudaEventRecord(e1, stream));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r == 0) continue;
      g.push_back((double)size * iters / (ms * 1e-3) / 1e9);
      std::vector<long long> s(8 * grid);
      CK(cudaMemcpy(s.data(), stamp, 8 * 8 * grid, cudaMemcpyDeviceToHost));
      tmhz += (double)(s[1] - s[0]) / (double)(s[3] - s[2]) * 1e3 / reps;
      tsmid = (int)s[4];
      soff = s[6];
      for (int b = budget; b < grid; b++)
        if (s[8 * b + 5] > 0) pmhz += (double)(s[8 * b + 1] - s[8 * b]) / (double)(s[8 * b + 3] - s[8 * b + 2]) * 1e3, piters += s[8 * b + 5], np++;
    }
    CK(cudaMemset(bad, 0, 8));
    kcheck<<<264, 512>>>(dst, src, size, bad);
    unsigned long long nb;
    CK(cudaMemcpy(&nb, bad, 8, cudaMemcpyDeviceToHost));
    std::sort(g.begin(), g.end());
    const char *pn[] = {"fma", "exit", "spin", "sib", "nosib"};
    printf("%s,%d,%s,%s,%lld,%d,%s,%d,%s,%d,%.1f,%.1f,%.1f,%.0f,%d,%.0f,%.1f,%s,%lld\n", mem, fence, nonblocking ? "nonblocking" : "default",
           tma ? "tma" : "st", size, budget, partners ? pn[partner] : "alone", partners, coop ? "coop" : "plain", iters, g[g.size() / 2], g.front(),
           g.back(), tmhz, tsmid, np ? pmhz / np : 0.0, np ? piters / np : 0.0, nb ? "BAD" : "ok", soff % 128);
    fflush(stdout);
  };
  if (!strcmp(cases, "quick")) {  // the committed anomaly's shape: 256 MiB, 1 and 16 SMs, alone and beside FMA
    std::vector<long long> sz;
    for (const char *c = sizes; *c;) {
      char *e;
      long long v = strtoll(c, &e, 10);
      if (*e == 'M') v <<= 20, e++;
      else if (*e == 'K') v <<= 10, e++;
      if (v <= 0 || v > maxsize) {
        fprintf(stderr, "bad size in sizes=%s\n", sizes);
        return 2;
      }
      sz.push_back(v);
      c = *e == ',' ? e + 1 : e;
      if (*e && *e != ',') {
        fprintf(stderr, "bad sizes=%s\n", sizes);
        return 2;
      }
    }
    for (int tma = 1; tma >= 0; tma--)
      for (long long size : sz)
        for (int b : {1, 16}) {
          int it = size > (16 << 20) ? 1 : 50;
          run(tma, size, b, P_FMA, 0, 0, it, 5);
          run(tma, size, b, P_FMA, sms - b, 1, it, 5);
        }
    return 0;
  }
  for (int tma = 1; tma >= 0; tma--) {
    for (long long size : {256ll << 20, 1ll << 20}) {
      int it = size > (16 << 20) ? 2 : 50, reps = 5;
      for (int b : {1, 4, 16, 66}) {
        run(tma, size, b, P_FMA, 0, 1, it, reps);
        run(tma, size, b, P_FMA, sms - b, 1, it, reps);
        run(tma, size, b, P_FMA, sms - b, 0, it, reps);
        run(tma, size, b, P_EXIT, sms - b, 1, it, reps);
        run(tma, size, b, P_SPIN, sms - b, 1, it, reps);
        if (b == 1 || b == 16)
          for (int c : {1, 2, 8, 32, 66})
            if (c < sms - b) run(tma, size, b, P_FMA, c, 1, it, reps);
        if (b == 1) {
          run(tma, size, b, P_SIB, sms - b, 1, it, reps);
          run(tma, size, b, P_NOSIB, sms - b, 1, it, reps);
        }
      }
    }
  }
  return 0;
}
