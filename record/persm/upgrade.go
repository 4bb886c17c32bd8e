package persm

import (
	"strings"

	"github.com/nvshbench/nvshbench/record"
)

// Files written before params.sm_budget kept a row's SM budget in
// params.ctas: read, it moves to SMBudget, so old and new files' rows are
// the same points (compare matches them, the readers take their budgets).
func init() { record.RegisterUpgrade(upgradeBudget) }

func upgradeBudget(_ *record.Header, p *record.Point) {
	if strings.HasPrefix(p.ID, Suite+"/") && p.Params.SMBudget == 0 && p.Params.CTAs != 0 {
		p.Params.SMBudget, p.Params.CTAs = p.Params.CTAs, 0
	}
}
