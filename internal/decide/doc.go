// Package decide is the one rule by which nvshbench names a faster
// implementation: the guide of `model`, and the "fastest" and verdict
// columns of `report` (MoE, device API) all ask it.
//
// A contender wins at one size only where
//
//   - its lead (the next contender's median time over its own, minus one)
//     is at least a practical margin (Rule.Margin, 3 % by default), and
//   - the confidence interval of the time ratio excludes 1 for every other
//     contender: the Hodges–Lehmann estimate of the ratio (the median of the
//     pairwise ratios of their samples) with its distribution-free (Moses)
//     interval, taken from the exact null distribution of the Mann–Whitney U
//     statistic (a normal approximation for large samples). Tied samples, as
//     a quantized timer gives, only widen it: the interval is closed, so a
//     run of equal ratios at 1 keeps 1 inside.
//
// A series of sizes is a family of tests: each interval is made at the
// level 1 − Alpha/m over the m sizes compared (Bonferroni), so that all of a
// series' intervals hold together with 1 − Alpha (95 %). Otherwise the
// verdict is "tie (within x %)", x being the margin or, where the samples
// cannot tell closer, the furthest end of the interval.
//
// No verdict rests on a measurement that is no figure of what is compared
// or that its record marks for a second look (a cache served it, it is
// above its link, noisy, ...: Entry.Unjudged): such a size is "not
// judged", names no one, and is not one of the family (Family).
//
// Contenders that ran the same code here are one contender ("same
// operation here"): Operation says which, from what the record says ran.
package decide
