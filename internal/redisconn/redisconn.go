// Package redisconn turns a Redis URL into a connected, checked client. It is
// the one place dtq reads Redis connection settings.
//
// Supported today:
//
//	redis://[user[:password]@]host[:port][/db]    plain TCP
//	rediss://[user[:password]@]host[:port][/db]   TLS (system roots)
//
// Cluster and Sentinel URLs are recognised and refused with ErrUnsupported
// until those topologies are supported; every key dtq writes is already
// Cluster-safe.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// ErrUnsupported is returned for URL forms dtq recognises but does not
// support yet (Cluster, Sentinel).
var ErrUnsupported = errors.New("redisconn: not yet supported")

// ErrVersion is returned when the server is older than Redis 7.0.
var ErrVersion = errors.New("redisconn: unsupported Redis version")

// MinMajor is the oldest supported Redis major version.
const MinMajor = 7

// Options turns url into client options. It validates the URL but does not
// connect.
func Options(rawURL string) (rueidis.ClientOption, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// A *url.Error quotes the whole URL, password included: keep only
		// its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return rueidis.ClientOption{}, fmt.Errorf("redisconn: invalid Redis URL: %w", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
	case "redis+cluster", "rediss+cluster", "redis-cluster":
		return rueidis.ClientOption{}, fmt.Errorf("%w: Redis Cluster URL %q", ErrUnsupported, u.Scheme+"://")
	case "redis+sentinel", "rediss+sentinel", "redis-sentinel":
		return rueidis.ClientOption{}, fmt.Errorf("%w: Redis Sentinel URL %q", ErrUnsupported, u.Scheme+"://")
	case "":
		return rueidis.ClientOption{}, fmt.Errorf("redisconn: invalid Redis URL %q: want redis://host:port or rediss://host:port", Redact(rawURL))
	default:
		return rueidis.ClientOption{}, fmt.Errorf("redisconn: invalid Redis URL scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.Hostname() == "" {
		return rueidis.ClientOption{}, fmt.Errorf("redisconn: invalid Redis URL %q: no host", Redact(rawURL))
	}
	q := u.Query()
	if q.Has("addr") {
		return rueidis.ClientOption{}, fmt.Errorf("%w: several addresses (Redis Cluster)", ErrUnsupported)
	}
	if q.Has("master_set") {
		return rueidis.ClientOption{}, fmt.Errorf("%w: Redis Sentinel (master_set)", ErrUnsupported)
	}
	opt, err := rueidis.ParseURL(rawURL)
	if err != nil {
		return rueidis.ClientOption{}, fmt.Errorf("redisconn: %w", err)
	}
	opt.DisableCache = true
	opt.ForceSingleClient = true
	return opt, nil
}

// Connect connects to the Redis at rawURL and checks that it is Redis 7.0 or
// newer (or Valkey 7.2 or newer, which reports a Redis 7 version).
func Connect(ctx context.Context, rawURL string) (rueidis.Client, error) {
	opt, err := Options(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("redisconn: connect to %s: %w", Redact(rawURL), err)
	}
	if err := CheckVersion(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// CheckVersion asks the server for its version and refuses anything older
// than Redis 7.0: on 6.2, XAUTOCLAIM and XCLAIM answer differently.
func CheckVersion(ctx context.Context, c rueidis.Client) error {
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return fmt.Errorf("redisconn: INFO server: %w", err)
	}
	v := infoField(info, "redis_version")
	major, err := majorVersion(v)
	if err != nil {
		return fmt.Errorf("%w: cannot read redis_version %q", ErrVersion, v)
	}
	if major < MinMajor {
		return fmt.Errorf("%w: server is Redis %s; dtq needs Redis 7.0 or newer (or Valkey 7.2+): "+
			"before 7.0 XAUTOCLAIM and XCLAIM answer differently", ErrVersion, v)
	}
	return nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

func majorVersion(v string) (int, error) {
	head, _, _ := strings.Cut(v, ".")
	return strconv.Atoi(head)
}

// Redact hides the password of a URL, for logs and error messages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}
