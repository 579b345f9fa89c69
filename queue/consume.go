package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Handler processes one message for Subscription.Consume. If it returns
// without settling the message, Consume acknowledges it when the handler
// returned nil, and hands it back for redelivery (Nak with no delay) when it
// returned an error or panicked.
type Handler func(ctx context.Context, m *Message) error

// Consume receives messages and runs handler on each, up to MaxInFlight at
// once, until ctx ends (returning ctx.Err()) or the subscription is closed
// (returning nil). It waits for running handlers before returning; their ctx
// is ctx.
func (s *Subscription) Consume(ctx context.Context, handler Handler) error {
	slots := make(chan struct{}, s.maxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		m, err := s.Receive(ctx)
		if err != nil {
			<-slots
			switch {
			case errors.Is(err, ErrClosed):
				return nil
			case ctx.Err() != nil:
				return ctx.Err()
			}
			continue // a reader error, already logged; the reader keeps retrying
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			s.handle(ctx, m, handler)
		}()
	}
}

func (s *Subscription) handle(ctx context.Context, m *Message, handler Handler) {
	err := callHandler(ctx, m, handler)
	s.mu.Lock()
	state := m.state
	s.mu.Unlock()
	// Settle what the handler left unsettled. A message handed back by Close
	// meanwhile (abandoned) is still acked after a success: unless someone
	// reclaimed it, that saves a duplicate delivery.
	if state != stateReceived && (state != stateAbandoned || err != nil) {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	var serr error
	if err == nil {
		serr = m.Ack(sctx)
	} else {
		s.q.log.Warn("handler failed; message handed back", attrTopic, m.Topic, attrError, err)
		serr = m.Nak(sctx, 0)
	}
	if serr != nil {
		s.q.log.Warn("settling message after handler failed", attrTopic, m.Topic, attrError, serr)
	}
}

func callHandler(ctx context.Context, m *Message, handler Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("queue: handler panic: %v", r)
		}
	}()
	return handler(ctx, m)
}
