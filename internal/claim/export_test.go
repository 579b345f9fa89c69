package claim

import (
	"context"

	"github.com/dtq-dev/dtq/internal/store"
)

// PassOthers is passOthers of a reader that runs types, for tests.
func PassOthers(ctx context.Context, r *Reader, types Types, read []store.Entry) {
	r.run.Types = types
	r.passOthers(ctx, read)
}

// WaitsForTypes reports whether r's next turn waits for a task of its
// types (waitForTypes).
func WaitsForTypes(r *Reader) bool { return r.waitTypes }
