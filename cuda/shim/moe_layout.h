/* moe_layout.h: what every PE computes the same way from the MoE routing
 * (moe_route.h): the counts of each (rank, expert), the region of each
 * (expert, source) at its destination, and the offsets of the remote and
 * local buffers. Plain C, no CUDA: the shim's moe_plan (moe.cuh) runs it,
 * and suites/moe's TestLayoutMatchesTheShim compiles it with cc and
 * compares Go's Layout with it on many shapes.
 *
 * Remote buffer (the same offsets on every PE): counters, signals, the
 * per-expert slots and their headers, normal mode's arrival slots, the
 * combine slots. Local buffer: tables, done counters, epochs, the output,
 * NCCL's staging. */
#ifndef NB_MOE_LAYOUT_H
#define NB_MOE_LAYOUT_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "moe_route.h"

enum { MOE_LL = 0, MOE_NORMAL = 1 };
enum { MOE_BF16 = 0, MOE_FP8 = 1 }; /* args.dtype of a MoE point (the dispatched tokens; combine returns bf16) */

typedef struct MoeLayout {
  int n, el, t, k, e, mode;
  int64_t tok; /* dispatch payload of a token (bf16: hidden x 2; fp8: hidden + hidden/128 x 4 scales) */
  int64_t out; /* combine payload (bf16 hidden) */
  int64_t sz;  /* a slot: the larger of the two */
  int64_t max_slots, max_arr;
  int64_t o_ctr, o_sig, o_csig, o_slot, o_smeta, o_arr, o_ameta, o_comb, remote;
  int64_t o_done, o_epoch, o_route, o_w, o_cnt, o_roff, o_aoff, o_pairs, o_list, o_tab, o_seen, o_outp, o_send, o_recv, local;
} MoeLayout;

/* Host copies of the routing (every rank's) and what follows from it. */
typedef struct MoeHost {
  int32_t *route; /* n x t x k experts */
  float *w;       /* n x t x k weights */
  int64_t *cnt;   /* n x e: tokens of rank r that select expert e */
  int64_t *roff;  /* n(dest) x el x n(src): the slot where (expert, source)'s region starts at dest */
  int64_t *pairs; /* n(src) x n(dest): tokens of src with an expert on dest (normal messages) */
  int64_t *aoff;  /* n(dest) x n(src): where src's arrivals start at dest */
} MoeHost;

static inline int64_t moe_align256(int64_t x) { return (x + 255) & ~255ll; }

/* moe_place gives a region of bytes the offset *o and moves *o past it,
 * to the next multiple of 256. */
static inline int64_t moe_place(int64_t *o, int64_t bytes) {
  int64_t at = *o;
  *o = moe_align256(at + bytes);
  return at;
}

/* The local counters (uint64 words at o_done): dispatch ll per (dest,
 * expert), dispatch normal per dest, combine per source, fan-out per
 * (expert, source). */
static inline int64_t moe_done_words(const MoeLayout *L) { return 2 * (int64_t)L->n * L->el + 2 * L->n; }

/* The longest list of a step: a row per selection, per (token, rank), per
 * slot and per arrival. */
static inline int64_t moe_rows(const MoeLayout *L) { return (int64_t)L->t * L->k + (int64_t)L->t * L->n + L->max_slots + L->max_arr; }

/* moe_shape fills in the point's sizes (the arguments already checked:
 * positive, experts a multiple of the PEs). */
static inline void moe_shape(MoeLayout *L, int npes, int tokens, int topk, int experts, int hidden, int dtype, int mode) {
  memset(L, 0, sizeof *L);
  L->n = npes, L->t = tokens, L->k = topk, L->e = experts, L->mode = mode;
  L->el = experts / npes;
  L->tok = dtype == MOE_FP8 ? (int64_t)hidden + hidden / 128 * 4 : (int64_t)hidden * 2;
  L->out = (int64_t)hidden * 2;
  L->sz = L->tok > L->out ? L->tok : L->out;
}

static inline void moe_host_free(MoeHost *h) {
  free(h->route), free(h->w), free(h->cnt), free(h->roff), free(h->pairs), free(h->aoff);
  memset(h, 0, sizeof *h);
}

/* moe_host_alloc: the tables of L's shape, counts at zero; -1 (nothing
 * held) where the host has no memory. */
static inline int moe_host_alloc(MoeHost *h, const MoeLayout *L) {
  int64_t n = L->n, ntk = n * L->t * L->k;
  h->route = (int32_t *)malloc(sizeof(int32_t) * ntk);
  h->w = (float *)malloc(sizeof(float) * ntk);
  h->cnt = (int64_t *)calloc((size_t)(n * L->e), sizeof(int64_t));
  h->roff = (int64_t *)calloc((size_t)(n * L->el * n), sizeof(int64_t));
  h->pairs = (int64_t *)calloc((size_t)(n * n), sizeof(int64_t));
  h->aoff = (int64_t *)calloc((size_t)(n * n), sizeof(int64_t));
  if (h->route && h->w && h->cnt && h->roff && h->pairs && h->aoff) return 0;
  moe_host_free(h);
  return -1;
}

/* moe_route_all: every rank's routing, the tokens of each (rank, expert)
 * and of each (source, destination rank); -1 where the host has no memory. */
static inline int moe_route_all(MoeHost *h, const MoeLayout *L, int64_t seed, double zipf) {
  int n = L->n, t = L->t, k = L->k, e = L->e, el = L->el;
  uint64_t *cdf = (uint64_t *)malloc(sizeof(uint64_t) * e);
  int32_t *order = (int32_t *)malloc(sizeof(int32_t) * e);
  if (!cdf || !order) {
    free(cdf), free(order);
    return -1;
  }
  int skewed = zipf > 0;
  if (skewed) moe_zipf(zipf, e, cdf), moe_order(seed, e, order);
  for (int r = 0; r < n; r++)
    for (int tk = 0; tk < t; tk++) {
      int32_t *ex = h->route + ((int64_t)r * t + tk) * k;
      moe_route_token(seed, r, tk, e, k, skewed, cdf, order, ex, h->w + ((int64_t)r * t + tk) * k);
      uint64_t seen = 0;
      for (int j = 0; j < k; j++) {
        h->cnt[(int64_t)r * e + ex[j]]++;
        int d = ex[j] / el;
        if (!(seen >> d & 1)) seen |= 1ull << d, h->pairs[r * n + d]++;
      }
    }
  free(cdf), free(order);
  return 0;
}

/* moe_regions: at each destination, the slots by expert then source and
 * the arrivals by source; the busiest destination's counts. */
static inline void moe_regions(MoeHost *h, MoeLayout *L) {
  int n = L->n, el = L->el;
  for (int d = 0; d < n; d++) {
    int64_t s = 0;
    for (int l = 0; l < el; l++)
      for (int src = 0; src < n; src++) {
        h->roff[((int64_t)d * el + l) * n + src] = s;
        s += h->cnt[(int64_t)src * L->e + d * el + l];
      }
    int64_t q = 0;
    for (int src = 0; src < n; src++) h->aoff[d * n + src] = q, q += h->pairs[src * n + d];
    L->max_slots = L->max_slots > s ? L->max_slots : s;
    L->max_arr = L->max_arr > q ? L->max_arr : q;
  }
}

/* moe_place_buffers: the offsets of both buffers (max_ctas: the epoch words,
 * one per CTA). */
static inline void moe_place_buffers(MoeLayout *L, int max_ctas) {
  int64_t n = L->n, t = L->t, k = L->k, e = L->e, el = L->el;
  int normal = L->mode == MOE_NORMAL;
  int64_t o = 0;
  L->o_ctr = moe_place(&o, 8 * (el * n + n));
  L->o_sig = moe_place(&o, 8 * (el * n + n));
  L->o_csig = moe_place(&o, 8 * n);
  L->o_slot = moe_place(&o, L->max_slots * L->sz);
  L->o_smeta = moe_place(&o, L->max_slots * 16);
  L->o_arr = moe_place(&o, normal ? L->max_arr * L->sz : 0);
  L->o_ameta = moe_place(&o, normal ? L->max_arr * 32 : 0);
  L->o_comb = moe_place(&o, t * (normal ? n : k) * L->out);
  L->remote = o;
  int64_t ntk = n * t * k, rows = moe_rows(L);
  o = 0;
  L->o_done = moe_place(&o, 8 * moe_done_words(L));
  L->o_epoch = moe_place(&o, 8 * (int64_t)max_ctas);
  L->o_route = moe_place(&o, 4 * ntk);
  L->o_w = moe_place(&o, 4 * ntk);
  L->o_cnt = moe_place(&o, 8 * n * e);
  L->o_roff = moe_place(&o, 8 * n * el * n);
  L->o_aoff = moe_place(&o, 8 * n * n);
  L->o_pairs = moe_place(&o, 8 * n * n);
  L->o_list = moe_place(&o, 64 * rows);                                /* headers (and normal combine's slot lists) */
  L->o_tab = moe_place(&o, 16 * 4 * rows + 8 * t * (k > n ? k : n));  /* NCCL's gather / scatter tables and positions */
  L->o_seen = moe_place(&o, 4 * el * n * t);
  L->o_outp = moe_place(&o, t * L->out);
  L->o_send = moe_place(&o, rows * (L->sz + 32));
  L->o_recv = moe_place(&o, rows * (L->sz + 32));
  L->local = o;
}

/* moe_plan_host: the routing, its tables and the layout of a shaped L
 * (moe_shape) into h (freed first); -1 where the host has no memory. */
static inline int moe_plan_host(MoeHost *h, MoeLayout *L, int64_t seed, double zipf, int max_ctas) {
  moe_host_free(h);
  if (moe_host_alloc(h, L)) return -1;
  if (moe_route_all(h, L, seed, zipf)) return -1;
  moe_regions(h, L);
  moe_place_buffers(L, max_ctas);
  return 0;
}

/* moe_slot_ranks: for each selection (token tk, j) of one rank's routing
 * (t x k experts of e), the tokens before tk that select the same expert:
 * its slot in the (expert, source) region. count: e words of scratch. One
 * pass: a running count per expert (a token selects an expert once). */
static inline void moe_slot_ranks(const int32_t *route, int t, int k, int e, int64_t *count, int64_t *rank) {
  memset(count, 0, sizeof(int64_t) * e);
  for (int tk = 0; tk < t; tk++) {
    const int32_t *ex = route + (int64_t)tk * k;
    for (int j = 0; j < k; j++) rank[(int64_t)tk * k + j] = count[ex[j]];
    for (int j = 0; j < k; j++) count[ex[j]]++;
  }
}
#endif
