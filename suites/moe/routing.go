package moe

import "math"

// The Go twin of cuda/shim/moe_route.h: the same routing from the same
// seed, so the plan knows what the shim will move (buffer sizes, loads,
// the bytes that cross a link). TestRoutingMatchesTheShim compiles the C
// file and compares the two.

func mix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func draw(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	return mix(*state)
}

// order is the seeded permutation of the experts (moe_order).
func order(seed int64, experts int) []int32 {
	o := make([]int32, experts)
	for i := range o {
		o[i] = int32(i)
	}
	st := mix(uint64(seed) ^ 0x5EED)
	for i := experts - 1; i > 0; i-- {
		j := int(draw(&st) % uint64(i+1))
		o[i], o[j] = o[j], o[i]
	}
	return o
}

// zipfCDF is moe_zipf: cumulative Zipf weights scaled to 2^53.
func zipfCDF(s float64, experts int) []uint64 {
	total := 0.0
	for i := 0; i < experts; i++ {
		total += math.Pow(float64(i+1), -s)
	}
	cdf := make([]uint64, experts)
	acc := 0.0
	for i := 0; i < experts; i++ {
		acc += math.Pow(float64(i+1), -s)
		if i == experts-1 {
			cdf[i] = 1 << 53
		} else {
			cdf[i] = uint64(acc / total * 9007199254740992.0)
		}
	}
	return cdf
}

// Routing is every rank's top-k selections and weights.
type Routing struct {
	Ranks, Tokens, TopK, Experts int
	Expert                       []int32   // [rank][token][k]
	Weight                       []float32 // [rank][token][k]
}

// Route computes the routing of every rank (zipf 0: uniform).
func Route(seed int64, ranks, tokens, topk, experts int, zipf float64) *Routing {
	r := &Routing{Ranks: ranks, Tokens: tokens, TopK: topk, Experts: experts,
		Expert: make([]int32, ranks*tokens*topk), Weight: make([]float32, ranks*tokens*topk)}
	var cdf []uint64
	var ord []int32
	if zipf > 0 {
		cdf, ord = zipfCDF(zipf, experts), order(seed, experts)
	}
	for rank := 0; rank < ranks; rank++ {
		for t := 0; t < tokens; t++ {
			base := (rank*tokens + t) * topk
			st := mix((uint64(seed) * 0x100000001B3) ^ (uint64(rank) << 40) ^ uint64(t))
			n := 0
			for n < topk {
				x := draw(&st)
				var e int32
				if zipf > 0 {
					u := x >> 11
					lo, hi := 0, experts-1
					for lo < hi {
						mid := (lo + hi) / 2
						if u < cdf[mid] {
							hi = mid
						} else {
							lo = mid + 1
						}
					}
					e = ord[lo]
				} else {
					e = int32(x % uint64(experts))
				}
				dup := false
				for i := 0; i < n; i++ {
					dup = dup || r.Expert[base+i] == e
				}
				if !dup {
					r.Expert[base+n] = e
					n++
				}
			}
			var w [64]uint32
			var sum uint32
			for i := 0; i < topk; i++ {
				w[i] = 1 + uint32(draw(&st)%8)
				sum += w[i]
			}
			for i := 0; i < topk; i++ {
				r.Weight[base+i] = float32(w[i]) / float32(sum)
			}
		}
	}
	return r
}

// Experts of token t of rank.
func (r *Routing) Of(rank, t int) []int32 {
	b := (rank*r.Tokens + t) * r.TopK
	return r.Expert[b : b+r.TopK]
}

// Stats are what a point records of its routing, for this job's ranks.
type Stats struct {
	Slots     []int64   // messages each rank's experts receive (ll)
	Sel       [][]int64 // [src][dest]: selections of src's tokens of experts on dest (ll messages)
	Pairs     [][]int64 // [src][dest]: tokens of src with an expert on dest (normal messages)
	MaxSlots  int64     // the busiest rank's expert slots
	MaxArr    int64     // the busiest rank's arrivals (normal)
	LoadRank  float64
	LoadExp   float64
	Selection int64 // selections of rank 0 (its T x K)
}

// Stats counts the routing over n ranks of experts/n experts each.
func (r *Routing) Stats() Stats {
	n, el := r.Ranks, r.Experts/r.Ranks
	s := Stats{Slots: make([]int64, n), Sel: make([][]int64, n), Pairs: make([][]int64, n), Selection: int64(r.Tokens * r.TopK)}
	perExpert := make([]int64, r.Experts)
	for src := 0; src < n; src++ {
		s.Sel[src], s.Pairs[src] = make([]int64, n), make([]int64, n)
		for t := 0; t < r.Tokens; t++ {
			var seen uint64
			for _, e := range r.Of(src, t) {
				d := int(e) / el
				s.Slots[d]++
				s.Sel[src][d]++
				perExpert[e]++
				if seen>>d&1 == 0 {
					seen |= 1 << d
					s.Pairs[src][d]++
				}
			}
		}
	}
	var maxE int64
	for _, c := range perExpert {
		maxE = max(maxE, c)
	}
	for d := 0; d < n; d++ {
		s.MaxSlots = max(s.MaxSlots, s.Slots[d])
		var arr int64
		for src := 0; src < n; src++ {
			arr += s.Pairs[src][d]
		}
		s.MaxArr = max(s.MaxArr, arr)
	}
	total := float64(n * r.Tokens * r.TopK)
	s.LoadRank = float64(s.MaxSlots) / (total / float64(n))
	s.LoadExp = float64(maxE) / (total / float64(r.Experts))
	return s
}
