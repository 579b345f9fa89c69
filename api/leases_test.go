package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A refused lease request names the field of the request that is wrong,
// as the request spells it, and no other (issue 30: "max":101 answered
// "max_running must be 1-100"). The limits' own field keeps its name.
func TestLeaseErrorsNameTheirField(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		for _, c := range []struct{ body, want string }{
			{`{"worker":"w","max":101}`, "max must be 1-100"},
			{`{"worker":"w","max":-1}`, "max must be 1-100"},
			{`{"worker":"w","wait_seconds":21}`, "wait_seconds must be"},
			{`{"worker":"w","lease_seconds":0.001}`, "lease_seconds must be"},
		} {
			r := e.do("POST", "/api/v1/leases", c.body)
			named(t, c.body, r, c.want)
			if strings.Contains(r.errMessage(), "max_running") {
				t.Errorf("%s: message %q names max_running", c.body, r.errMessage())
			}
		}
		r := e.do("PUT", "/api/v1/limits/default", `{"max_running":1000001}`)
		named(t, "limit", r, "max_running must be")
		if r.status != http.StatusBadRequest {
			t.Errorf("limit: %d", r.status)
		}
	})
}
