package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/relocated"
)

// The login-node shim on a compute node whose NVSHMEM lives elsewhere,
// without a GPU: the shim built against the pinned wheels (its build folder
// out of reach), NVSHMEM found only as a copy in another folder
// (NVSHMEM_HOME, no LD_LIBRARY_PATH, no Python). doctor --shim lists the
// copy's bootstrap plugins by their full paths and they load, and the
// bootstrap a launcher's job gets (Open MPI's and Slurm's variables set as
// they set them; under a real mpirun -np 2 where Open MPI is installed)
// points NVSHMEM at the copy's plugin. Nothing names the build folder.
func TestDoctorWithRelocatedNVSHMEM(t *testing.T) {
	s := relocated.New(t)
	lib := filepath.Join(s.Home, "lib")
	doctor := func(t *testing.T, env ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "doctor", "--shim", s.Shim)
		cmd.Env = s.Env(os.Environ(), append([]string{"NVSHBENCH_TEST_CLI=1"}, env...)...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 0 && code != exitNoGPU {
			t.Fatalf("doctor: %v\n%s", err, out)
		}
		return string(out)
	}
	check := func(t *testing.T, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !regexp.MustCompile(w).MatchString(out) {
				t.Errorf("doctor lacks %q:\n%s", w, out)
			}
		}
		if strings.Contains(out, s.Built) {
			t.Errorf("doctor names the build folder %s:\n%s", s.Built, out)
		}
	}
	plugin := func(file string) string { return regexp.QuoteMeta(filepath.Join(lib, file)) }
	lines := []string{
		`NVSHMEM\s+` + regexp.QuoteMeta(s.Home) + ` 3\.4\.5\s+\(NVSHMEM_HOME\)`,
		`PMI    loads: NVSHMEM_BOOTSTRAP_PMI_PLUGIN=` + plugin("nvshmem_bootstrap_pmi.so.3") + "\n",
		`PMI-2  loads: NVSHMEM_BOOTSTRAP_PMI2_PLUGIN=` + plugin("nvshmem_bootstrap_pmi2.so.3") + "\n",
		`UID    loads: NVSHMEM_BOOTSTRAP_UID_PLUGIN=` + plugin("nvshmem_bootstrap_uid.so.3") + "\n",
		`PMIX   (loads: NVSHMEM_BOOTSTRAP_PMIX_PLUGIN=|does not load: )` + plugin("nvshmem_bootstrap_pmix.so.3"),
	}
	// Open MPI's libmpi.so.40 is there (mpirun with it): the MPI plugin loads
	// and is chosen under Open MPI. Without Open MPI neither it nor PMIx's
	// plugin loads (no PMIx 3/4 library), each line names the plugin, and
	// the choice under Open MPI says that none works.
	openMPI := `under this openmpi job: NVSHMEM bootstrap (PMIX|MPI), chosen by nvshbench for openmpi.*; plugin NVSHMEM_BOOTSTRAP_(PMIX|MPI)_PLUGIN=` +
		regexp.QuoteMeta(lib) + `/nvshmem_bootstrap_(pmix|mpi)\.so\.3\n`
	if _, err := exec.LookPath("mpirun"); err == nil {
		lines = append(lines, `MPI    loads: NVSHMEM_BOOTSTRAP_MPI_PLUGIN=`+plugin("nvshmem_bootstrap_mpi.so.3")+"\n")
	} else {
		lines = append(lines, `MPI    does not load: `+plugin("nvshmem_bootstrap_mpi.so.3")+`: .*libmpi\.so\.40`)
		openMPI = `under this openmpi job: none works: no NVSHMEM bootstrap for openmpi loads here: PMIX does not load \(` + plugin("nvshmem_bootstrap_pmix.so.3") +
			`: .*\); MPI does not load \(` + plugin("nvshmem_bootstrap_mpi.so.3") + `: .*libmpi\.so\.40.*\)\n`
	}
	t.Run("openmpi", func(t *testing.T) {
		out := doctor(t, "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=0")
		check(t, out, append(lines, openMPI)...)
	})
	t.Run("slurm", func(t *testing.T) {
		out := doctor(t, "SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_MPI_TYPE=pmi2")
		check(t, out, append(lines, `under this slurm job: NVSHMEM bootstrap PMI-2, chosen by nvshbench for slurm; plugin NVSHMEM_BOOTSTRAP_PMI2_PLUGIN=`+
			plugin("nvshmem_bootstrap_pmi2.so.3")+"\n")...)
	})
	t.Run("yours", func(t *testing.T) {
		// A plugin variable the user set is kept, and said so.
		mine := filepath.Join(t.TempDir(), "my_pmi2.so")
		b, _ := os.ReadFile(filepath.Join(lib, "nvshmem_bootstrap_pmi2.so.3"))
		os.WriteFile(mine, b, 0o755)
		out := doctor(t, "SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_MPI_TYPE=pmi2", "NVSHMEM_BOOTSTRAP_PMI2_PLUGIN="+mine)
		check(t, out, `PMI-2  loads: `+regexp.QuoteMeta(mine)+` \(your NVSHMEM_BOOTSTRAP_PMI2_PLUGIN, kept\)`,
			`under this slurm job: NVSHMEM bootstrap PMI-2, chosen by nvshbench for slurm; plugin `+regexp.QuoteMeta(mine)+` \(your`)
	})
	t.Run("mpirun", func(t *testing.T) {
		mpirun, err := exec.LookPath("mpirun")
		if err != nil {
			t.Skip("SKIPPED: no mpirun (Open MPI) on this machine; .ci/run installs it where it can")
		}
		cmd := exec.Command(mpirun, "-np", "2", "--oversubscribe", "-x", "NVSHBENCH_TEST_CLI", "-x", "NVSHMEM_HOME", "-x", "NVSHBENCH_PYTHON",
			os.Args[0], "doctor", "--shim", s.Shim)
		cmd.Env = s.Env(os.Environ(), "NVSHBENCH_TEST_CLI=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=")
		b, _ := cmd.CombinedOutput() // each rank exits 4 without a GPU: mpirun's status says nothing here
		out := string(b)
		re := regexp.MustCompile(`under this openmpi job: NVSHMEM bootstrap (PMIX|MPI), chosen by nvshbench for openmpi.*; plugin NVSHMEM_BOOTSTRAP_(PMIX|MPI)_PLUGIN=` +
			regexp.QuoteMeta(lib) + `/nvshmem_bootstrap_(pmix|mpi)\.so\.3\n`)
		if n := len(re.FindAllString(out, -1)); n != 2 {
			t.Errorf("%d of the 2 ranks name the relocated plugin:\n%s", n, out)
		}
		if strings.Contains(out, s.Built) {
			t.Errorf("a rank names the build folder %s:\n%s", s.Built, out)
		}
	})
}
