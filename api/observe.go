package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"time"
)

// routeUnmatched is the route reported for a request that matched no route
// (answered 404 or 405).
const routeUnmatched = "unmatched"

// observe wraps h to report every request to fn: the route pattern the
// API's ServeMux matched (for example "POST /api/v1/tasks", or "unmatched"),
// the status code written, and the time until the handler returned. With
// fn nil it returns h itself.
//
// The route is read from Request.Pattern, which ServeMux sets on the
// request it routes; the wrapper clears it first (an outer mux may have set
// its own) and puts the outer value back afterwards.
func observe(h http.Handler, fn func(route string, code int, d time.Duration)) http.Handler {
	if fn == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		outer := r.Pattern
		r.Pattern = ""
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		route := r.Pattern
		r.Pattern = outer
		if route == "" {
			route = routeUnmatched
		}
		fn(route, sw.status(), time.Since(start))
	})
}

// statusWriter records the status code a handler writes. It keeps the
// optional interfaces of the ResponseWriter it wraps: Flush, Hijack and
// ReadFrom directly, the others (deadlines, full duplex) through Unwrap for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	code     int
	hijacked bool
}

// status is the response's status code: the one written, 200 when the
// handler wrote none (net/http sends 200 then), 101 when the connection was
// hijacked (a WebSocket upgrade).
func (w *statusWriter) status() int {
	switch {
	case w.hijacked:
		return http.StatusSwitchingProtocols
	case w.code == 0:
		return http.StatusOK
	}
	return w.code
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) { // not 1xx informational
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the wrapped writer's io.ReaderFrom (sendfile) in use.
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

// Flush implements http.Flusher (doing nothing if the wrapped writer
// cannot flush).
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker; it fails with http.ErrNotSupported if
// the wrapped writer cannot hijack.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
