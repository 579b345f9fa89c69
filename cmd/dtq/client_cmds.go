package main

import (
	"io"

	"github.com/spf13/cobra"
)

// clientCommands returns the commands that talk to a running server's HTTP
// API (DTQ_API_URL, DTQ_API_KEY).
func clientCommands(out, errOut io.Writer) []*cobra.Command {
	return nil
}
