package main

import (
	"io"

	"github.com/spf13/cobra"
)

// clientCommands returns the commands that talk to a running server's HTTP
// API (DTQ_API_URL, DTQ_API_KEY). Each has the flags of addAPIFlags.
func clientCommands(out, errOut io.Writer) []*cobra.Command {
	return []*cobra.Command{
		newSubmitCmd(out),
		newGetCmd(out),
		newListCmd(out),
		newCancelCmd(out),
		newSignalCmd(out),
		newDLQCmd(out),
		newRetryDLQCmd(out),
		newQueueCmd(out),
		newScheduleCmd(out),
		newLimitCmd(out),
		newGroupCmd(out),
		newWorkflowCmd(out),
		newWorkersCmd(out),
		newAuditCmd(out),
		newHistoryCmd(out),
	}
}
