package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpKey is a (route, code) pair of bounded label values.
type httpKey struct {
	route string
	code  int
}

// httpSeries are the series of one httpKey.
type httpSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// ObserveHTTP counts one HTTP API request: route is the route pattern it
// matched ("POST /api/v1/tasks", or "unmatched"), code its status. Its
// signature is api.Config.ObserveRequest's.
func (m *Metrics) ObserveHTTP(route string, code int, d time.Duration) {
	if route == "" {
		route = routeUnmatched
	}
	if code < 100 || code > 599 {
		code = 0 // exported as "other"
	}
	k := httpKey{m.routes.get(route), code}
	s, ok := m.httpSeries.Load(k)
	if !ok {
		c := Other
		if code != 0 {
			c = strconv.Itoa(code)
		}
		s, _ = m.httpSeries.LoadOrStore(k, &httpSeries{
			requests: m.httpRequests.WithLabelValues(k.route, c),
			duration: m.httpDurations.WithLabelValues(k.route),
		})
	}
	hs := s.(*httpSeries)
	hs.requests.Inc()
	hs.duration.Observe(d.Seconds())
}
