package outbox

// SetAfterSend makes r call f after dtq accepted a batch and before its
// rows are deleted (the window a crash of the relay leaves rows that dtq
// already has).
func SetAfterSend(r *Relay, f func()) { r.afterSend = f }
