package redisconn

import "github.com/redis/rueidis"

// Conn is a Redis connection as dtq's public packages take it (conn.Redis
// is this type): it hides the client library, so no third-party type is
// in their signatures. The packages of this module reach the client with
// Client.
type Conn struct{ c rueidis.Client }

// Wrap returns c as a Conn; closing the Conn closes c.
func Wrap(c rueidis.Client) *Conn { return &Conn{c: c} }

// Client returns the client of c (nil for a nil Conn).
func Client(c *Conn) rueidis.Client {
	if c == nil {
		return nil
	}
	return c.c
}

// Close closes the connection (and stops the in-process server of a
// "memory://" one).
func (c *Conn) Close() { c.c.Close() }
