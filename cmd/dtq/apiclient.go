package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// defaultAPIURL is where the client commands look for the API when neither
// --api-url nor DTQ_API_URL says otherwise.
const defaultAPIURL = "http://localhost:8000"

// maxResponseBytes bounds how much of an answer the CLI reads.
const maxResponseBytes = 64 << 20

// apiOptions are the flags every client command has.
type apiOptions struct {
	url     string
	key     string
	json    bool
	timeout time.Duration
}

// addAPIFlags registers the client flags on cmd as persistent flags, so a
// command group (dlq, queue) passes them on to its subcommands. --api-key
// has no visible default: DTQ_API_KEY is read when the command runs, so
// --help never prints a secret.
func addAPIFlags(cmd *cobra.Command, o *apiOptions) {
	f := cmd.PersistentFlags()
	def := defaultAPIURL
	if v := os.Getenv("DTQ_API_URL"); v != "" { // empty counts as unset
		def = v
	}
	f.StringVar(&o.url, "api-url", def, "base URL of the dtq API [DTQ_API_URL]")
	f.StringVar(&o.key, "api-key", "", "API key, sent as X-API-Key [DTQ_API_KEY]")
	f.BoolVar(&o.json, "json", false, "print the API's JSON answer instead of a table")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on the API after this long")
}

// client builds the API client from the flags of cmd.
func (o *apiOptions) client(cmd *cobra.Command) (*apiClient, error) {
	key := o.key
	if f := cmd.Flags().Lookup("api-key"); f == nil || !f.Changed {
		key = os.Getenv("DTQ_API_KEY")
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("--timeout must be positive (got %v)", o.timeout)
	}
	c, err := newAPIClient(o.url, key, o.timeout)
	if err != nil {
		source := "--api-url"
		if f := cmd.Flags().Lookup("api-url"); f != nil && !f.Changed && os.Getenv("DTQ_API_URL") != "" {
			source = "DTQ_API_URL"
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return c, nil
}

// apiClient calls the dtq HTTP API.
type apiClient struct {
	base    string // scheme://host[:port][/prefix], without a trailing slash
	key     string
	timeout time.Duration
	http    *http.Client
}

// newAPIClient returns a client of the API at base, sending key (if any) as
// X-API-Key, giving up on a call after timeout.
func newAPIClient(base, key string, timeout time.Duration) (*apiClient, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the API URL must be an http:// or https:// URL like %s (got %q)", defaultAPIURL, base)
	}
	return &apiClient{
		base:    strings.TrimSuffix(base, "/"),
		key:     key,
		timeout: timeout,
		http: &http.Client{
			// A redirect is reported, not followed: following it would send
			// the API key to wherever it points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// apiError is an error answer of the API.
type apiError struct {
	Status  int
	Code    string // from the body; "" when the body is not the API's shape
	Message string
	TaskID  string // of an in_progress or idempotency_key_reused answer
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.Status)
	switch {
	case e.Code != "" && e.Message != "":
		b.WriteString(" " + e.Code + ": " + e.Message)
	case e.Code != "":
		b.WriteString(" " + e.Code)
	case e.Message != "":
		b.WriteString(" " + e.Message) // "502 Bad Gateway: …"
	}
	if e.TaskID != "" {
		b.WriteString(" (task " + e.TaskID + ")")
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		b.WriteString(" (set --api-key or DTQ_API_KEY)")
	case e.Status == http.StatusForbidden && e.Code == wire.CodeForbidden:
		b.WriteString(" (the key of --api-key or DTQ_API_KEY has a role that may not do this: use a key of the role named)")
	}
	return b.String()
}

// call is one request: method and path (with query), an optional JSON body
// and extra headers.
type call struct {
	method string
	path   string
	query  url.Values
	body   any
	header http.Header
}

// answer is a successful response.
type answer struct {
	status int
	raw    []byte
}

// do sends c and returns the answer of a 2xx response; any other response
// is an *apiError, and a failure to get one says what went wrong in a line.
func (a *apiClient) do(ctx context.Context, c call) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	target := a.base + c.path
	if len(c.query) > 0 {
		target += "?" + c.query.Encode()
	}
	var body io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, target, body)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.key != "" {
		req.Header.Set("X-API-Key", a.key)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return nil, a.transportError(ctx, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if err != nil {
		return nil, a.transportError(ctx, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, responseError(res, raw)
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("the answer of %s %s is not JSON: is %s the dtq API?", c.method, c.path, a.base)
	}
	return &answer{status: res.StatusCode, raw: raw}, nil
}

// doJSON sends c and decodes the answer into v.
func (a *apiClient) doJSON(ctx context.Context, c call, v any) (*answer, error) {
	ans, err := a.do(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(ans.raw, v); err != nil {
		return nil, fmt.Errorf("the answer of %s %s does not have the expected shape (%v): is %s the dtq API?", c.method, c.path, err, a.base)
	}
	return ans, nil
}

// transportError turns a failure to get an answer into one line.
func (a *apiClient) transportError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer from the API at %s within %v (raise --timeout)", a.base, a.timeout)
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach the API at %s: connection refused (is \"dtq serve\" running? set --api-url or DTQ_API_URL)", a.base)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("cannot reach the API at %s: %v (set --api-url or DTQ_API_URL)", a.base, dns)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot reach the API at %s: %v", a.base, err)
}

// number is n, an integer or a float64, as a JSON number: a number field
// of a wire request body.
func number[N int | int64 | float64](n N) json.RawMessage {
	b, err := json.Marshal(n)
	if err != nil {
		panic(err) // a NaN or infinite float64: callers pass finite numbers
	}
	return b
}

// responseError builds the error of a non-2xx response: the API's
// {"error":{"code","message"}} shape, or the status and the start of
// whatever else answered.
func responseError(res *http.Response, raw []byte) error {
	var body wire.Error
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		e := &apiError{Status: res.StatusCode, Code: body.Error.Code, Message: oneLine(body.Error.Message, 300), TaskID: body.Error.TaskID}
		if ra := res.Header.Get("Retry-After"); res.StatusCode == http.StatusTooManyRequests && ra != "" && !strings.Contains(e.Message, "retry after") {
			e.Message += " (retry after " + oneLine(ra, 40) + "s)"
		}
		return e
	}
	e := &apiError{Status: res.StatusCode, Message: http.StatusText(res.StatusCode)}
	if loc := res.Header.Get("Location"); res.StatusCode >= 300 && res.StatusCode < 400 && loc != "" {
		e.Message += ": redirected to " + oneLine(loc, 200) + "; set --api-url to the API's own address"
	} else if s := oneLine(string(raw), 120); s != "" {
		e.Message += ": " + s
	}
	return e
}
