/* moe_route.h: the MoE routing every PE computes for every rank, the same
 * everywhere (the shim's moe_layout.h, and the Go side's suites/moe, whose
 * TestRoutingMatchesTheShim checks its twin against this file compiled
 * with cc). Plain C, integer arithmetic but for the Zipf table and the
 * weights.
 *
 * Token t of rank r selects k distinct experts of e: uniformly, or by a
 * Zipf law of exponent s over a seeded order of the experts (a few hot
 * experts, spread over the ranks). Its weights are k positive floats
 * summing to 1. Everything follows from (seed, rank, token). */
#ifndef NB_MOE_ROUTE_H
#define NB_MOE_ROUTE_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline uint64_t moe_mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The stream of draws of token t of rank r. */
static inline uint64_t moe_draw(uint64_t *state) {
  *state += 0x9E3779B97F4A7C15ull;
  return moe_mix(*state);
}

/* moe_order fills order[e] with a seeded permutation of the experts: the
 * Zipf law's i-th most popular expert is order[i]. */
static inline void moe_order(int64_t seed, int experts, int32_t *order) {
  for (int i = 0; i < experts; i++) order[i] = i;
  uint64_t st = moe_mix((uint64_t)seed ^ 0x5EEDull);
  for (int i = experts - 1; i > 0; i--) {
    int j = (int)(moe_draw(&st) % (uint64_t)(i + 1));
    int32_t x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
}

/* moe_zipf fills cdf[i] (i < experts) with the cumulative Zipf weights of
 * exponent s, scaled to 2^53 as integers (the draws compare integers). */
static inline void moe_zipf(double s, int experts, uint64_t *cdf) {
  double total = 0;
  for (int i = 0; i < experts; i++) total += pow((double)(i + 1), -s);
  double acc = 0;
  for (int i = 0; i < experts; i++) {
    acc += pow((double)(i + 1), -s);
    double v = acc / total * 9007199254740992.0; /* 2^53 */
    cdf[i] = i == experts - 1 ? 9007199254740992ull : (uint64_t)v;
  }
}

/* moe_route_token writes token t of rank r's k experts and weights. cdf is
 * moe_zipf's table and order moe_order's (both ignored when uniform). */
static inline void moe_route_token(int64_t seed, int rank, int token, int experts, int topk, int skewed, const uint64_t *cdf,
                                   const int32_t *order, int32_t *out, float *weights) {
  uint64_t st = moe_mix(((uint64_t)seed * 0x100000001B3ull) ^ ((uint64_t)rank << 40) ^ (uint64_t)token);
  int n = 0;
  while (n < topk) {
    uint64_t x = moe_draw(&st);
    int e;
    if (skewed) {
      uint64_t u = x >> 11; /* 53 bits */
      int lo = 0, hi = experts - 1;
      while (lo < hi) { /* the first i with u < cdf[i] */
        int mid = (lo + hi) / 2;
        if (u < cdf[mid]) hi = mid;
        else lo = mid + 1;
      }
      e = order[lo];
    } else {
      e = (int)(x % (uint64_t)experts);
    }
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= out[i] == e;
    if (!dup) out[n++] = e;
  }
  /* Weights: 1 + (draw mod 8) for each, normalised (exact in float). */
  uint32_t w[64];
  uint32_t sum = 0;
  for (int i = 0; i < topk; i++) {
    w[i] = 1 + (uint32_t)(moe_draw(&st) % 8);
    sum += w[i];
  }
  for (int i = 0; i < topk; i++) weights[i] = (float)w[i] / (float)sum;
}
#endif
