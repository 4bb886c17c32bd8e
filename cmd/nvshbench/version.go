package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func versionString() string {
	s := Version
	if Commit != "" {
		s += " (" + Commit + ")"
	}
	return s
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the tool version and commit",
		Example: `  nvshbench version`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			fmt.Fprintf(c.OutOrStdout(), "nvshbench %s %s/%s %s\n", versionString(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}
