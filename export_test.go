package dtq

import "time"

// StallClaims makes w call stall when a read returns claimed entries,
// before it looks at them: a worker frozen with the read's reply on its
// way (SIGSTOP, a long pause).
// Set it before w starts.
func StallClaims(w *Worker, stall func()) { w.stallClaims = stall }

// SetEventLinger makes c's event lines wait d for a submission to take
// them before its timer publishes them (eventLinger otherwise).
func SetEventLinger(c *Client, d time.Duration) { c.pub.linger = d }

// SetAheadBelow makes w claim ahead while its handlers average under d
// (aheadBelow otherwise): a test of what claiming ahead does, on a host so
// loaded that quick handlers may average a millisecond.
// Set it before w starts.
func SetAheadBelow(w *Worker, d time.Duration) { w.aheadBelow = d }
