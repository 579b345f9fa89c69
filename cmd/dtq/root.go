package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newRootCmd builds the dtq command tree, writing output to out and logs to
// errOut.
func newRootCmd(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "dtq",
		Short:         "dtq: a task queue and reliable message queue on Redis Streams",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(newVersionCmd(out), newServeCmd(out, errOut), newAPICmd(out, errOut), newWorkerCmd(out, errOut), newRelayCmd(out, errOut))
	root.AddCommand(clientCommands(out, errOut)...)
	root.AddCommand(newBenchCmd(out))
	return root
}
