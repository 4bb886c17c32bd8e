package decide

import (
	"math"
	"sort"
	"sync"
)

// Ratio is the Hodges–Lehmann estimate of the ratio of two sets of times
// (b over a: above 1, b is slower) and its confidence interval.
type Ratio struct {
	Est    float64 // exp of the median of the pairwise log ratios
	Lo, Hi float64 // the interval; NaN where the samples are too few for its level
	Level  float64 // its confidence level
}

// OK reports whether the samples were enough for an interval.
func (r Ratio) OK() bool { return !math.IsNaN(r.Lo) && !math.IsNaN(r.Hi) }

// HodgesLehmann estimates b / a from the n·m pairwise ratios bⱼ / aᵢ (on
// log times, a shift model) with the distribution-free interval of Moses:
// the (c+1)-th smallest and largest pairwise log ratio, c the largest U with
// P(U ≤ c) ≤ (1 − level)/2 under the null distribution of the Mann–Whitney
// statistic. Non-positive or non-finite samples are left out; fewer than
// two on a side give an estimate without interval.
func HodgesLehmann(a, b []float64, level float64) Ratio {
	la, lb := logs(a), logs(b)
	r := Ratio{Est: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Level: level}
	if len(la) == 0 || len(lb) == 0 {
		return r
	}
	d := make([]float64, 0, len(la)*len(lb))
	for _, x := range la {
		for _, y := range lb {
			d = append(d, y-x)
		}
	}
	sort.Float64s(d)
	nm := len(d)
	if nm%2 == 1 {
		r.Est = math.Exp(d[nm/2])
	} else {
		r.Est = math.Exp((d[nm/2-1] + d[nm/2]) / 2)
	}
	if len(la) < 2 || len(lb) < 2 {
		return r
	}
	c := uCritical(len(la), len(lb), (1-level)/2)
	if c < 0 {
		return r
	}
	r.Lo, r.Hi = math.Exp(d[c]), math.Exp(d[nm-1-c])
	return r
}

func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// exactMax bounds the n·m of the samples whose U distribution is counted
// exactly (the count costs (n·m)² steps); beyond it the normal
// approximation is within a rank of the exact critical value.
const exactMax = 2500

// uCritical is the largest c with P(U ≤ c) ≤ tail for U, the Mann–Whitney
// statistic of n and m samples without ties, under the null hypothesis; −1
// where even P(U = 0) exceeds tail (too few samples for that level).
func uCritical(n, m int, tail float64) int {
	if n*m > exactMax {
		return uNormal(n, m, tail)
	}
	cdf := uCDF(n, m)
	c := -1
	for u, p := range cdf {
		if p > tail*(1+1e-12) {
			break
		}
		c = u
	}
	return c
}

// uNormal is uCritical from the normal approximation of U (mean n·m/2,
// variance n·m(n+m+1)/12): a rank or a few below the exact value in the far
// tails (a slightly wider interval, never a narrower one there).
func uNormal(n, m int, tail float64) int {
	mean := float64(n*m) / 2
	sd := math.Sqrt(float64(n*m) * float64(n+m+1) / 12)
	z := math.Sqrt2 * math.Erfinv(1-2*tail)
	return max(int(math.Ceil(mean-z*sd))-1, -1)
}

var cdfCache sync.Map // [2]int{n, m} → []float64

// uCDF is P(U ≤ u) for u = 0..n·m: the counts of the arrangements of n
// and m samples by U, from N(i, j, u) = N(i−1, j, u−j) + N(i, j−1, u)
// (the largest sample is the first set's, above all j of the second, or
// the second's), over C(n+m, n).
func uCDF(n, m int) []float64 {
	if n > m {
		n, m = m, n // U's distribution is symmetric in the two sizes
	}
	key := [2]int{n, m}
	if v, ok := cdfCache.Load(key); ok {
		return v.([]float64)
	}
	// prev[j] = N(i−1, j, ·), cur[j] = N(i, j, ·)
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = []float64{1} // i = 0: one arrangement, U = 0
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1}
		for j := 1; j <= m; j++ {
			c := make([]float64, i*j+1)
			for u, v := range prev[j] {
				c[u+j] += v
			}
			for u, v := range cur[j-1] {
				c[u] += v
			}
			cur[j] = c
		}
		prev = cur
	}
	counts := prev[m]
	total := 0.0
	for _, v := range counts {
		total += v
	}
	cdf := make([]float64, len(counts))
	acc := 0.0
	for u, v := range counts {
		acc += v
		cdf[u] = acc / total
	}
	cdfCache.Store(key, cdf)
	return cdf
}
