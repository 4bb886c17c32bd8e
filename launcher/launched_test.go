package launcher

import "testing"

func TestDetectLauncher(t *testing.T) {
	clear := func() {
		for _, k := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
			"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NNODES", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "NVSHBENCH_NO_LAUNCHER"} {
			t.Setenv(k, "")
		}
	}
	clear()
	if _, ok := DetectLauncher(); ok {
		t.Fatal("detected a launcher in an empty environment")
	}
	t.Setenv("SLURM_PROCID", "0")
	t.Setenv("SLURM_NTASKS", "1")
	if _, ok := DetectLauncher(); ok {
		t.Error("a one-task srun is not a multi-PE job (nvshbench starts its own workers)")
	}
	t.Setenv("SLURM_NTASKS", "16")
	t.Setenv("SLURM_PROCID", "9")
	t.Setenv("SLURM_LOCALID", "1")
	t.Setenv("SLURM_NNODES", "2")
	l, ok := DetectLauncher()
	if !ok || l.By != "slurm" || l.Rank != 9 || l.Size != 16 || l.LocalRank != 1 || l.Nodes != 2 {
		t.Errorf("slurm: %+v %v", l, ok)
	}
	// Open MPI wins when mpirun runs inside an allocation.
	t.Setenv("OMPI_COMM_WORLD_RANK", "3")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "8")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4")
	l, ok = DetectLauncher()
	if !ok || l.By != "openmpi" || l.Rank != 3 || l.Size != 8 || l.Nodes != 2 {
		t.Errorf("openmpi: %+v %v", l, ok)
	}
	t.Setenv("NVSHBENCH_NO_LAUNCHER", "1")
	if _, ok := DetectLauncher(); ok {
		t.Error("NVSHBENCH_NO_LAUNCHER=1 ignored")
	}
	clear()
	t.Setenv("PMI_RANK", "1")
	t.Setenv("PMI_SIZE", "2")
	if l, ok := DetectLauncher(); !ok || l.By != "pmi" || l.LocalRank != 1 {
		t.Errorf("pmi: %+v %v", l, ok)
	}
}
