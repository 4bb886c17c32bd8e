package record

import "sync"

// A family's record layer says how a point an older tool wrote reads today
// (record/persm: the SM budget that files before params.sm_budget kept in
// params.ctas), so that every reader sees old and new files alike and
// compare matches their points. The readers import the layers they read
// (report, model and plots do), which register here when they load.
var (
	upgradesMu sync.RWMutex
	upgrades   []func(h *Header, p *Point)
)

// RegisterUpgrade adds how a point of an older file reads today: f changes
// p in place where it is such a point, and leaves every other point alone.
func RegisterUpgrade(f func(h *Header, p *Point)) {
	upgradesMu.Lock()
	defer upgradesMu.Unlock()
	upgrades = append(upgrades, f)
}

// upgrade applies every registered upgrade to a point just read.
func upgrade(h *Header, p *Point) {
	upgradesMu.RLock()
	defer upgradesMu.RUnlock()
	for _, f := range upgrades {
		f(h, p)
	}
}
