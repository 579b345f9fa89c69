// Command dtq is the dtq binary: today a queue demo (serve) and version.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(os.Stdout, os.Stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		// the engine's errors carry their own "dtq: "
		fmt.Fprintln(os.Stderr, "dtq:", strings.TrimPrefix(err.Error(), "dtq: "))
		os.Exit(1)
	}
}
