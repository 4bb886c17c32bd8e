package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/launcher"
)

// bootstrapChoice is how NVSHMEM bootstraps under a launcher: the variables
// nvshbench sets (none when the user chose) and why, for the header.
type bootstrapChoice struct {
	Vars map[string]string
	Why  string
}

// Bootstrap plugins of the NVSHMEM wheel, by the name of their mode.
var bootstrapPlugins = map[string]string{"PMIX": "nvshmem_bootstrap_pmix.so.3", "PMI-2": "nvshmem_bootstrap_pmi2.so.3",
	"PMI": "nvshmem_bootstrap_pmi.so.3", "MPI": "nvshmem_bootstrap_mpi.so.3"}

// chooseBootstrap picks NVSHMEM's bootstrap for a launcher-started job when
// the user set none: PMIx under Open MPI and srun --mpi=pmix where the
// wheel's PMIx plugin loads (it needs the PMIx 3/4 symbols that Ubuntu
// 24.04's PMIx 5 lacks), else MPI under Open MPI, PMI-2 under srun, PMI-1
// under Hydra. A choice that cannot work is refused before NVSHMEM starts
// (NVSHMEM crashes when a plugin fails to load).
func chooseBootstrap(lib cuda.Lib, l launcher.Launched) (bootstrapChoice, error) {
	user := os.Getenv("NVSHMEM_BOOTSTRAP")
	if strings.EqualFold(user, "PMIX") {
		return bootstrapChoice{}, usagef("NVSHMEM_BOOTSTRAP=PMIX is not a bootstrap NVSHMEM knows: set NVSHMEM_BOOTSTRAP=PMI NVSHMEM_BOOTSTRAP_PMI=PMIX (or NVSHMEM_BOOTSTRAP=MPI under mpirun)")
	}
	loads := func(mode string) error { return lib.ProbeBootstrap(bootstrapPlugins[mode]) }
	if user != "" {
		mode := strings.ToUpper(user)
		if mode == "PMI" {
			if m := strings.ToUpper(os.Getenv("NVSHMEM_BOOTSTRAP_PMI")); m != "" {
				mode = m
			}
		}
		if _, known := bootstrapPlugins[mode]; known {
			if err := loads(mode); err != nil {
				return bootstrapChoice{}, usagef("NVSHMEM's %s bootstrap cannot load here: %v ('nvshmem doctor' lists the ones that do)", mode, err)
			}
		}
		return bootstrapChoice{Why: fmt.Sprintf("NVSHMEM bootstrap %s, set by the user", mode)}, nil
	}
	var order []string
	switch l.By {
	case "openmpi":
		order = []string{"PMIX", "MPI"}
	case "slurm":
		if strings.HasPrefix(os.Getenv("SLURM_MPI_TYPE"), "pmix") {
			order = []string{"PMIX", "PMI-2"}
		} else {
			order = []string{"PMI-2", "PMI"}
		}
	default:
		order = []string{"PMI"}
	}
	var refused []string
	for _, mode := range order {
		if err := loads(mode); err != nil {
			refused = append(refused, fmt.Sprintf("%s does not load (%v)", mode, err))
			continue
		}
		vars := map[string]string{"NVSHMEM_BOOTSTRAP": mode}
		if mode == "PMIX" || mode == "PMI-2" {
			vars = map[string]string{"NVSHMEM_BOOTSTRAP": "PMI", "NVSHMEM_BOOTSTRAP_PMI": mode}
		}
		why := fmt.Sprintf("NVSHMEM bootstrap %s, chosen by nvshbench for %s", mode, l.By)
		if len(refused) > 0 {
			why += ": " + strings.Join(refused, "; ")
		}
		return bootstrapChoice{Vars: vars, Why: why}, nil
	}
	return bootstrapChoice{}, fmt.Errorf("no NVSHMEM bootstrap for %s loads here: %s", l.By, strings.Join(refused, "; "))
}

// bootstrapReport is doctor's line per bootstrap plugin.
func bootstrapReport(lib cuda.Lib) []string {
	var out []string
	for _, mode := range []string{"PMI", "PMI-2", "PMIX", "MPI"} {
		st := "loads"
		if err := lib.ProbeBootstrap(bootstrapPlugins[mode]); err != nil {
			st = "does not load: " + err.Error()
		}
		out = append(out, fmt.Sprintf("%-6s %s", mode, st))
	}
	return out
}
