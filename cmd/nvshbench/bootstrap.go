package main

import (
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/launcher"
)

// bootstrapChoice is how NVSHMEM bootstraps under a launcher: the variables
// nvshbench sets (none when the user chose everything) and why, for the
// header.
type bootstrapChoice struct {
	Vars map[string]string
	Why  string
}

// plugins is where NVSHMEM's bootstrap plugins are and how this process
// tells whether one loads.
type plugins struct {
	tc    *cuda.Toolchain         // NVSHMEM's lib folder holds them (Toolchain.PluginFile)
	probe func(file string) error // opens a plugin file as NVSHMEM will
}

// pluginsOf: the plugins beside the NVSHMEM that tc found, probed through
// lib (the fake's list under --shim fake), or, with no shim loaded (doctor
// on a machine without a GPU), by the loader itself.
func pluginsOf(lib cuda.Lib, tc *cuda.Toolchain) plugins {
	p := plugins{tc: tc, probe: cuda.ProbePlugin}
	if lib != nil {
		p.probe = lib.ProbeBootstrap
	}
	if p.tc == nil {
		p.tc = &cuda.Toolchain{}
	}
	return p
}

func (g *gpuSetup) plugins() plugins { return pluginsOf(g.lib, g.tc) }

// pluginState is one bootstrap plugin as NVSHMEM will see it: the file it
// will open, whose choice that is, and whether it loads.
type pluginState struct {
	cuda.BootstrapPlugin
	File   string
	Theirs bool  // the user's NVSHMEM_BOOTSTRAP_<x>_PLUGIN
	Err    error // nil when it loads
}

func (p plugins) state(bp cuda.BootstrapPlugin) pluginState {
	file, theirs := p.tc.PluginFile(bp)
	return pluginState{BootstrapPlugin: bp, File: file, Theirs: theirs, Err: p.probe(file)}
}

// failure says why the plugin does not load, naming its file: the loader
// names the plugin for its own faults (a truncated file, a missing symbol)
// but only the dependency for a dependency it cannot open (libmpi.so.40,
// libpmix.so.2), which alone does not say which plugin needs it.
func (s pluginState) failure() string {
	why := s.Err.Error()
	if strings.Contains(why, s.File) {
		return why
	}
	return s.File + ": " + why
}

// vars is what nvshbench sets so that NVSHMEM opens the file probed: the
// plugin's variable with its full path. None where the user set it (theirs
// is kept), or where no NVSHMEM folder is known (NVSHMEM then searches by
// name as it always does).
func (s pluginState) vars() map[string]string {
	if s.Theirs || !strings.ContainsRune(s.File, '/') {
		return nil
	}
	return map[string]string{s.Var: s.File}
}

// where says which file that is and why.
func (s pluginState) where() string {
	switch {
	case s.Theirs:
		return fmt.Sprintf("%s (your %s, kept)", s.File, s.Var)
	case !strings.ContainsRune(s.File, '/'):
		return s.File + " by name (no NVSHMEM folder found: the loader's search)"
	}
	return s.Var + "=" + s.File
}

// launcherModes are the bootstraps a launcher-started job can use.
var launcherModes = map[string]bool{"PMI": true, "PMI-2": true, "PMIX": true, "MPI": true}

// chooseBootstrap picks NVSHMEM's bootstrap for a launcher-started job when
// the user set none: PMIx under Open MPI and srun --mpi=pmix where the
// wheel's PMIx plugin loads (it needs the PMIx 3/4 symbols that Ubuntu
// 24.04's PMIx 5 lacks), else MPI under Open MPI, PMI-2 under srun, PMI-1
// under Hydra. NVSHMEM is pointed at the plugin by its full path in the
// folder of the libnvshmem_host.so.3 nvshbench opened (NVSHMEM would look
// its name up through the loader's search, which need not reach that
// folder), unless the user set the plugin's variable. A choice that cannot
// work is refused before NVSHMEM starts (NVSHMEM crashes when a plugin fails
// to load).
func chooseBootstrap(p plugins, l launcher.Launched) (bootstrapChoice, error) {
	user := os.Getenv("NVSHMEM_BOOTSTRAP")
	if strings.EqualFold(user, "PMIX") {
		return bootstrapChoice{}, usagef("NVSHMEM_BOOTSTRAP=PMIX is not a bootstrap NVSHMEM knows: set NVSHMEM_BOOTSTRAP=PMI NVSHMEM_BOOTSTRAP_PMI=PMIX (or NVSHMEM_BOOTSTRAP=MPI under mpirun)")
	}
	if user != "" {
		mode := strings.ToUpper(user)
		if mode == "PMI" {
			if m := strings.ToUpper(os.Getenv("NVSHMEM_BOOTSTRAP_PMI")); m != "" {
				mode = m
			}
			if mode == "PMI2" { // NVSHMEM takes both spellings (bootstrap.cpp:191-192)
				mode = "PMI-2"
			}
		}
		if mode == "PLUGIN" { // NVSHMEM refuses to start without the file (bootstrap.cpp:216-222)
			f := os.Getenv("NVSHMEM_BOOTSTRAP_PLUGIN")
			if f == "" {
				return bootstrapChoice{}, usagef("NVSHMEM_BOOTSTRAP=plugin needs NVSHMEM_BOOTSTRAP_PLUGIN, the plugin's file")
			}
			if err := p.probe(f); err != nil {
				return bootstrapChoice{}, usagef("NVSHMEM_BOOTSTRAP_PLUGIN=%s cannot load here: %v", f, err)
			}
			return bootstrapChoice{Why: "NVSHMEM bootstrap plugin " + f + ", set by the user"}, nil
		}
		if launcherModes[mode] {
			bp, _ := cuda.PluginFor(mode)
			s := p.state(bp)
			if s.Err != nil {
				return bootstrapChoice{}, usagef("NVSHMEM's %s bootstrap cannot load here: %s ('nvshbench doctor' lists the ones that do)", mode, s.failure())
			}
			return bootstrapChoice{Vars: s.vars(), Why: fmt.Sprintf("NVSHMEM bootstrap %s, set by the user; plugin %s", mode, s.where())}, nil
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
		bp, _ := cuda.PluginFor(mode)
		s := p.state(bp)
		if s.Err != nil {
			refused = append(refused, fmt.Sprintf("%s does not load (%s)", mode, s.failure()))
			continue
		}
		vars := map[string]string{"NVSHMEM_BOOTSTRAP": mode}
		if mode == "PMIX" || mode == "PMI-2" {
			vars = map[string]string{"NVSHMEM_BOOTSTRAP": "PMI", "NVSHMEM_BOOTSTRAP_PMI": mode}
		}
		maps.Copy(vars, s.vars())
		why := fmt.Sprintf("NVSHMEM bootstrap %s, chosen by nvshbench for %s", mode, l.By)
		if len(refused) > 0 {
			why += ": " + strings.Join(refused, "; ")
		}
		return bootstrapChoice{Vars: vars, Why: why + "; plugin " + s.where()}, nil
	}
	return bootstrapChoice{}, fmt.Errorf("no NVSHMEM bootstrap for %s loads here: %s", l.By, strings.Join(refused, "; "))
}

// addUIDPlugin points the NVSHMEM of run's own workers, which bootstrap
// with the unique ID, at its plugin by the full path: into env, which the
// workers get and the header records (nothing under the fake, or where the
// user set the variable or no NVSHMEM folder is known).
func addUIDPlugin(g *gpuSetup, env map[string]string) {
	if g.shimPath == "fake" {
		return
	}
	bp, _ := cuda.PluginFor("UID")
	file, theirs := g.tc.PluginFile(bp)
	maps.Copy(env, pluginState{BootstrapPlugin: bp, File: file, Theirs: theirs}.vars())
}

// bootstrapReport is doctor's line per bootstrap plugin: the file NVSHMEM
// will open and whether it loads.
func bootstrapReport(p plugins) []string {
	var out []string
	for _, bp := range cuda.BootstrapPlugins {
		s := p.state(bp)
		st := "loads: " + s.where()
		if s.Err != nil {
			st = "does not load: " + s.failure()
			if s.Theirs {
				st += fmt.Sprintf(" (your %s)", s.Var)
			}
		}
		out = append(out, fmt.Sprintf("%-6s %s", bp.Mode, st))
	}
	return out
}
