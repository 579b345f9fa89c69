package main

import (
	"fmt"
	"io"
	"time"
)

func report(w io.Writer, o *options, thr []throughputRow, lag lagResult) {
	fmt.Fprintf(w, "Relay throughput: %d rows committed beforehand, one relay from a cold start until the table is empty.\n\n", o.backlog)
	fmt.Fprintln(w, "| batch size | rows | seconds | rows/s |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	for _, r := range thr {
		fmt.Fprintf(w, "| %d | %d | %.2f | %.0f |\n", r.batch, r.rows, r.elapsed.Seconds(), float64(r.rows)/r.elapsed.Seconds())
	}
	fmt.Fprintf(w, "\nCommit-to-task lag at %d rows/s for %v (one row per transaction, 8 connections; %d rows committed in %.1f s, %.0f/s), default relay (batch 500, LISTEN/NOTIFY):\n\n",
		o.rate, o.duration, lag.rows, lag.elapsed.Seconds(), float64(lag.rows)/lag.elapsed.Seconds())
	fmt.Fprintln(w, "| p50 | p90 | p99 | max |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", ms(quantile(lag.lags, .5)), ms(quantile(lag.lags, .9)), ms(quantile(lag.lags, .99)), ms(lag.lags[len(lag.lags)-1]))
	if lag.negative > 0 {
		fmt.Fprintf(w, "\n(%d submits were noted before their commit call returned — the relay saw the commit first — and count as 0.)\n", lag.negative)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
