package api

import "github.com/dtq-dev/dtq"

// Routes returns the patterns s registered on its mux, in order.
func Routes(s *Server) []string {
	var out []string
	for _, r := range s.table {
		out = append(out, r.pattern)
	}
	return out
}

// RouteRoles returns the least role of each route s registered, by
// pattern: "read", "submit", "worker", "admin", or "none" for a route
// anyone may call.
func RouteRoles(s *Server) map[string]string {
	out := map[string]string{}
	for _, r := range s.table {
		out[r.pattern] = string(r.role)
	}
	return out
}

// WireOf returns what the API answers for v, a pointer to a value of an
// engine type it answers (nil for another type).
func WireOf(v any) any {
	switch v := v.(type) {
	case *dtq.Task:
		return taskOf(v)
	case *dtq.TaskPage:
		return taskPageOf(v)
	case *dtq.Event:
		return eventOf(v)
	case *dtq.DeadLetter:
		return deadLetterOf(v)
	case *dtq.QueueStats:
		return queueStatsOf(v)
	case *dtq.DeletedQueue:
		return deletedOf(v)
	case *dtq.GroupInfo:
		return groupOf(v)
	case *dtq.WorkerInfo:
		return workerOf(v)
	case *dtq.AuditEntry:
		return auditOf(v)
	case *dtq.RedriveResult:
		return redriveOf(v)
	case *dtq.Lease:
		return leaseOf(v)
	case *dtq.Workflow:
		return workflowOf(v)
	}
	return nil
}
