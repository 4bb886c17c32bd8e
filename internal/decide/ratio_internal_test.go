package decide

import "testing"

// The normal approximation used beyond exactMax stays close to the exact
// count where both can be had, and on the wide side in the far tails.
func TestNormalApproximationNearExact(t *testing.T) {
	for _, nm := range [][2]int{{50, 50}, {40, 60}, {30, 80}, {20, 120}} {
		for _, tail := range []float64{0.025, 0.05 / 30 / 2} {
			exact, approx := uCritical(nm[0], nm[1], tail), uNormal(nm[0], nm[1], tail)
			t.Logf("n=%d m=%d tail %.4g: exact %d, normal %d", nm[0], nm[1], tail, exact, approx)
			if d := exact - approx; d < -1 || float64(d) > 0.005*float64(nm[0]*nm[1]) {
				t.Errorf("n=%d m=%d tail %.4g: exact %d, normal %d", nm[0], nm[1], tail, exact, approx)
			}
		}
	}
}
