package browsertest

import (
	"testing"
)

// An HTTP worker — a lease holder polling POST /api/v1/leases — is listed
// on the workers page beside the Go workers, with what it said it runs on.
func TestWorkersPageListsHTTPWorkers(t *testing.T) {
	t.Parallel()
	p, _ := onRedis(t)
	p.Must(200, "POST", "/api/v1/leases", `{"worker":"py-test","queues":["nowhere"],"library":"dtq-python/0.1.0","concurrency":8,"busy":3}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/workers")
	tb.waitFor("the HTTP worker's row", `((r) => r !== null && r.textContent.includes('HTTP worker') &&
		r.querySelector('.worker-library').textContent === 'dtq-python/0.1.0' && r.textContent.includes('3 / 8'))(document.querySelector('table.workers tbody tr[data-id="http:py-test"]'))`)
	tb.waitFor("a Go worker's row too", `document.querySelectorAll('table.workers tbody tr').length >= 2`)
}
