// ce-probe.cu: why the copy engine's copies ran 3.9x slower beside the FMA
// loop (persm/ce/beside-fma: 527.7 against 2058.8 GB/s at 256 MiB) and only
// 8 % slower beside the tensor-core loop (results/h200-2026-12-01f/call4),
// while the FMA loop beside the copies kept its speed. A standalone copy of
// the row's shape: cudaMemcpyAsync device-to-device copies on one stream,
// timed by events, while a kernel on a second stream holds every SM, varied
// one thing at a time:
//   kind   fma (the row's loop: 8 accumulators a thread, 256 dependent FMA
//          steps an iteration), mma (wmma bf16 16x16x16, 128 pairs an
//          iteration), sleep (__nanosleep between stop checks: resident,
//          issuing almost nothing), poll (every thread reads the stop word)
//   shape  CTAs of THREADS threads, CTAS a SM (or a fixed grid), with SMEM
//          bytes of dynamic shared memory (the row's: 512 threads, one CTA
//          an SM, 128 KiB)
// What each outcome says: copies that slow down beside `sleep` on every
// thread slot, or stall until the background's deadline, need SMs (the
// driver copied with a kernel); copies that slow down beside FMA but not
// beside sleep with the same shape, in proportion to the FMA SMs, compete
// for issue slots or power; the background's own SM clock (clock64 over
// globaltimer) and nvidia-smi's power and clock-event samples (session.sh)
// tell power from the rest. Each case: GB/s of the timed copies, the
// background's clock and its iteration time, and the copies' destination
// checked against the source.
#include <cuda_runtime.h>
#include <mma.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

enum { K_FMA = 0, K_MMA = 1, K_SLEEP = 2, K_POLL = 3 };

struct Bg {
  int kind, steps;  // steps: an FMA iteration's dependent steps (256: the row's)
  unsigned long long *stop;     // device word: the stop copy writes want
  unsigned long long want;
  unsigned long long *started;  // device counter
  volatile unsigned long long *host;  // mapped: [0] every CTA started, [1] the deadline passed
  unsigned long long deadline_ns;
  long long *stamp;  // per CTA: clock begin, clock end, ns begin, ns end, iterations
  float *out;
  float m1, one;
};

__device__ static inline unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ static inline int stop_now(const Bg &p, unsigned long long t_end) {
  int s = 0;
  if (p.kind == K_POLL) s = *(volatile unsigned long long *)p.stop >= p.want;  // every thread reads
  else if (threadIdx.x == 0) s = *(volatile unsigned long long *)p.stop >= p.want;
  if (threadIdx.x == 0 && !s && gtime() > t_end) {
    p.host[1] = 1;
    s = 1;
  }
  return __syncthreads_or(s);
}

// FULL: 32 registers at most, so two 1024-thread CTAs fill an SM's 2048 slots.
template <int FULL>
__global__ void __launch_bounds__(1024, FULL ? 2 : 1) kbg(Bg p) {
  long long *st = p.stamp + 8 * blockIdx.x;
  long long c0 = clock64();
  unsigned long long t0 = gtime(), t_end = t0 + p.deadline_ns;
  if (threadIdx.x == 0 && atomicAdd(p.started, 1ull) == gridDim.x - 1ull) {
    p.host[0] = 1;
    __threadfence_system();
  }
  long long n = 0;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (p.kind == K_FMA) {
    float acc[8];
    for (int j = 0; j < 8; j++) acc[j] = 0.5f * (float)((c * 8 + j) % 251);
    do {
#pragma unroll 16
      for (int s = 0; s < p.steps; s++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[j] = fmaf(acc[j], p.m1, 0.0f);
#pragma unroll
      for (int j = 0; j < 8; j++) acc[j] += p.one;
      n++;
    } while (!stop_now(p, t_end));
    float sum = 0;
    for (int j = 0; j < 8; j++) sum += acc[j];
    p.out[c] = sum;
  } else if (p.kind == K_MMA) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bp, bn;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(a, __float2bfloat16(p.one));
    wmma::fill_fragment(bp, __float2bfloat16(p.one));
    wmma::fill_fragment(bn, __float2bfloat16(p.m1));
    wmma::fill_fragment(acc, (float)(c / 32 % 61));
    do {
      for (int s = 0; s < 128; s++) {
        wmma::mma_sync(acc, a, bp, acc);
        wmma::mma_sync(acc, a, bn, acc);
      }
      for (int e = 0; e < acc.num_elements; e++) acc.x[e] += p.one;
      n++;
    } while (!stop_now(p, t_end));
    float sum = 0;
    for (int e = 0; e < acc.num_elements; e++) sum += acc.x[e];
    p.out[c] = sum;
  } else if (p.kind == K_SLEEP) {
    do {
      __nanosleep(2000);
      n++;
    } while (!stop_now(p, t_end));
  } else {
    do n++;
    while (!stop_now(p, t_end));
  }
  if (threadIdx.x == 0) st[0] = c0, st[1] = clock64(), st[2] = (long long)t0, st[3] = (long long)gtime(), st[4] = n;
}

__global__ void kcheck(const uint8_t *a, const uint8_t *b, long long n, unsigned long long *bad) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n / 8; i += (long long)gridDim.x * blockDim.x)
    if (((const uint64_t *)a)[i] != ((const uint64_t *)b)[i]) atomicAdd(bad, 1ull);
}

static double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(int argc, char **argv) {
  double target_s = 0.1;  // the copies of a case take about this long alone
  int sweep = 0, d2d = 0, block = 0;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "target=", 7)) target_s = atof(argv[i] + 7);
    else if (!strncmp(argv[i], "sweep=", 6)) sweep = atoi(argv[i] + 6);
    else if (!strncmp(argv[i], "stop=", 5)) d2d = !strcmp(argv[i] + 5, "d2d");
    else if (!strncmp(argv[i], "block=", 6)) block = atoi(argv[i] + 6);
    else {
      fprintf(stderr, "usage: ce-probe [target=SECONDS] [sweep=0|1] [block=0|1] [stop=h2d|d2d]\n");
      return 2;
    }
  }
  CK(cudaSetDevice(0));
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int maxsmem;
  CK(cudaDeviceGetAttribute(&maxsmem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CK(cudaFuncSetAttribute(kbg<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxsmem));
  CK(cudaFuncSetAttribute(kbg<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxsmem));
  cudaStream_t sa, sb;  // created first, before any work: distinct hardware queues
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  const long long maxsize = 256ll << 20;
  uint8_t *src, *dst;
  CK(cudaMalloc(&src, maxsize));
  CK(cudaMalloc(&dst, maxsize));
  std::vector<uint64_t> h(maxsize / 8);
  for (size_t i = 0; i < h.size(); i++) h[i] = i * 0x9E3779B97F4A7C15ull + 7;
  CK(cudaMemcpy(src, h.data(), maxsize, cudaMemcpyHostToDevice));
  unsigned long long *stop, *started, *bad, *hstop, *stopvals;
  CK(cudaMalloc(&stop, 8));
  CK(cudaMalloc(&started, 8));
  CK(cudaMalloc(&bad, 8));
  CK(cudaMallocHost(&hstop, 64));
  // stop=d2d: the stop word copied device to device from stopvals[seq]
  // (its values written now, before any background runs)
  CK(cudaMalloc(&stopvals, 8 * 4096));
  {
    std::vector<unsigned long long> v(4096);
    for (int i = 0; i < 4096; i++) v[i] = (unsigned long long)i;
    CK(cudaMemcpy(stopvals, v.data(), 8 * 4096, cudaMemcpyHostToDevice));
  }
  volatile unsigned long long *host;
  CK(cudaHostAlloc((void **)&host, 64, cudaHostAllocMapped));
  unsigned long long *host_dev;
  CK(cudaHostGetDevicePointer((void **)&host_dev, (void *)host, 0));
  long long *stamp;
  float *out;
  const int maxgrid = 32 * 1024;
  CK(cudaMalloc(&stamp, 8 * 8 * (size_t)maxgrid));
  CK(cudaMalloc(&out, 4 * 2048 * (size_t)sms * 4));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  unsigned long long seq = 0;
  printf("t_wall,kind,threads,ctas_per_sm,grid,smem,size,copies,gbps,alone_gbps,ratio,bg_mhz,bg_ns_per_iter,bg_deadline_hit,ok,code,steps\n");
  // alone rate per size, measured first and again at the end
  auto copies_for = [&](long long size, double gbps) {
    long long k = (long long)(target_s * gbps * 1e9 / (double)size);
    return std::max(4ll, std::min(k, 4000ll));
  };
  std::vector<double> alone_gbps(2, 0.0);
  const long long sizes[2] = {256ll << 20, 1ll << 20};
  auto time_copies = [&](long long size, long long k) {
    CK(cudaEventRecord(e0, sa));
    for (long long i = 0; i < k; i++) CK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, sa));
    CK(cudaEventRecord(e1, sa));
  };
  auto check = [&](long long size) {
    CK(cudaMemset(bad, 0, 8));
    kcheck<<<264, 512>>>(dst, src, size, bad);
    unsigned long long nb;
    CK(cudaMemcpy(&nb, bad, 8, cudaMemcpyDeviceToHost));
    return nb == 0;
  };
  // kind < 0: no background
  // code: -1 the kernel by shape (kbg<1> where two or more CTAs an SM), 0 or 1 that one
  auto run = [&](int kind, int threads, int per_sm, int grid_fixed, int smem, int si, bool calibrate, int code = -1, int steps = 256) {
    long long size = sizes[si];
    double t_wall = wall();
    int grid = 0;
    // The destination cleared before the background starts: a memset is a
    // kernel, and queued on the copies' stream after the background it
    // waited for an SM there (call A's and B's every-slot cases: the copies,
    // behind it, ran after the background ended, at the rate alone).
    CK(cudaMemsetAsync(dst, 0, size, sa));
    CK(cudaStreamSynchronize(sa));
    if (kind >= 0) {
      int occ = 0;
      if (code < 0) code = per_sm > 1;
      auto kern = code ? kbg<1> : kbg<0>;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, threads, smem));
      if (per_sm > occ) {
        printf("%.3f,%d,%d,%d,0,%d,%lld,0,,,,,,,not resident (occupancy %d),%d,%d\n", t_wall, kind, threads, per_sm, smem, size, occ, code, steps);
        return;
      }
      grid = grid_fixed ? grid_fixed : per_sm * sms;
      seq++;
      CK(cudaMemsetAsync(started, 0, 8, sb));
      host[0] = 0, host[1] = 0;
      if (seq >= 4096) exit(4);
      Bg p{kind, steps, stop, seq, started, host_dev, 3ull * 1000 * 1000 * 1000, stamp, out, -1.0f, 1.0f};
      kern<<<grid, threads, smem, sb>>>(p);
      CK(cudaGetLastError());
      double w0 = wall();
      while (!host[0]) {
        if (wall() - w0 > 5) {
          fprintf(stderr, "the background's CTAs did not all start\n");
          exit(3);
        }
      }
    }
    long long k = copies_for(size, alone_gbps[si] > 0 ? alone_gbps[si] : 2000);
    time_copies(size, k);
    if (kind >= 0) {
      *hstop = seq;
      if (d2d) CK(cudaMemcpyAsync(stop, stopvals + seq, 8, cudaMemcpyDeviceToDevice, sa));  // after e1: ends the background
      else CK(cudaMemcpyAsync(stop, hstop, 8, cudaMemcpyHostToDevice, sa));
    }
    CK(cudaStreamSynchronize(sa));
    CK(cudaStreamSynchronize(sb));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    double gbps = (double)size * k / (ms * 1e-3) / 1e9;
    if (calibrate) alone_gbps[si] = gbps;
    double mhz = 0, nspi = 0;
    int deadline = 0;
    if (kind >= 0) {
      std::vector<long long> s(8 * (size_t)grid);
      CK(cudaMemcpy(s.data(), stamp, 8 * 8 * (size_t)grid, cudaMemcpyDeviceToHost));
      for (int b = 0; b < grid; b++) {
        mhz += (double)(s[8 * b + 1] - s[8 * b]) / (double)(s[8 * b + 3] - s[8 * b + 2]) * 1e3 / grid;
        nspi += (double)(s[8 * b + 3] - s[8 * b + 2]) / (double)std::max(1ll, s[8 * b + 4]) / grid;
      }
      deadline = (int)host[1];
    }
    bool ok = check(size);
    printf("%.3f,%s,%d,%d,%d,%d,%lld,%lld,%.1f,%.1f,%.3f,%.0f,%.1f,%d,%s,%d,%d\n", t_wall,
           kind < 0 ? "none" : (const char *[]){"fma", "mma", "sleep", "poll"}[kind], threads, per_sm, grid, smem, size, k, gbps,
           alone_gbps[si], alone_gbps[si] > 0 ? gbps / alone_gbps[si] : 0.0, mhz, nspi, deadline, ok ? "ok" : "BAD", code, steps);
    fflush(stdout);
  };
  const int S128 = 128 << 10;
  if (block) {  // do the copies need an SM? backgrounds that leave none free, and one that leaves every one (256 MiB)
    run(-1, 0, 0, 0, 0, 0, true);
    run(-1, 0, 0, 0, 0, 0, true);
    run(K_FMA, 512, 1, 0, 0, 0, false, 0);
    run(K_SLEEP, 512, 1, 0, 0, 0, false, 0);
    run(K_SLEEP, 1024, 2, 0, 0, 0, false, 1);  // every thread slot, idle
    run(K_FMA, 1024, 2, 0, 0, 0, false, 1);    // every thread slot, FMA
    run(K_SLEEP, 512, 4, 0, 0, 0, false, 1);   // every thread slot, 4 CTAs
    run(K_SLEEP, 32, 1, 0, maxsmem, 0, false, 0);  // every byte of shared memory, thread slots free
    run(K_SLEEP, 32, 32, 0, 0, 0, false, 1);   // every CTA slot (32 an SM), 1024 threads
    run(-1, 0, 0, 0, 0, 0, false);
    return 0;
  }
  if (sweep) {  // where the FMA loop's slowdown of the copies comes from: code, shape, stop checks (256 MiB)
    run(-1, 0, 0, 0, 0, 0, true);
    run(-1, 0, 0, 0, 0, 0, true);
    for (int code : {0, 1}) {
      run(K_FMA, 512, 1, 0, 0, 0, false, code);
      run(K_FMA, 512, 1, 0, 0, 0, false, code, 4096);  // a stop check 16x less often
      for (int th : {128, 256, 384, 640, 768, 1024}) run(K_FMA, th, 1, 0, 0, 0, false, code);
      for (int pa : {2, 3, 4}) run(K_FMA, 512, pa, 0, 0, 0, false, code);
      run(K_FMA, 256, 2, 0, 0, 0, false, code);
      run(K_FMA, 256, 4, 0, 0, 0, false, code);
      run(K_FMA, 1024, 2, 0, 0, 0, false, code);
    }
    run(-1, 0, 0, 0, 0, 0, false);
    return 0;
  }
  for (int si = 0; si < 2; si++) {
    run(-1, 0, 0, 0, 0, si, true);  // warm-up
    run(-1, 0, 0, 0, 0, si, true);
    run(K_FMA, 512, 1, 0, S128, si, false);   // the row's shape
    run(K_FMA, 512, 1, 0, 0, si, false);      // without the shared memory
    run(K_MMA, 512, 1, 0, S128, si, false);   // the mma row's shape
    run(K_SLEEP, 512, 1, 0, S128, si, false); // resident, idle
    run(K_POLL, 512, 1, 0, S128, si, false);  // every thread reads the stop word
    run(K_FMA, 128, 1, 0, S128, si, false);   // one warp a scheduler
    run(K_FMA, 1024, 2, 0, 0, si, false);     // every thread slot
    run(K_SLEEP, 1024, 2, 0, 0, si, false);   // every thread slot, idle
    run(K_SLEEP, 32, 1, 0, maxsmem, si, false);  // every byte of shared memory, idle
    run(K_FMA, 512, 1, sms / 2, S128, si, false);  // FMA on half the SMs
    run(K_FMA, 512, 1, sms / 4, S128, si, false);  // on a quarter
    run(-1, 0, 0, 0, 0, si, false);  // alone again: drift
  }
  return 0;
}
