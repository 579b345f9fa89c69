package api

// Routes returns the patterns s registered on its mux, in order.
func Routes(s *Server) []string { return append([]string(nil), s.patterns...) }

// BodyTypes returns a zero value of each of the API's own body types, by
// the name of its schema in openapi.json.
func BodyTypes() map[string]any {
	return map[string]any{
		"Submission":      submission{},
		"BatchItem":       batchItem{},
		"Error":           errorBody{},
		"ErrorDetail":     errorDetail{},
		"ScheduleBody":    scheduleBody{},
		"Schedule":        scheduleJSON{},
		"Step":            stepBody{},
		"WorkflowBody":    workflowBody{},
		"LeaseRequest":    leaseBody{},
		"LeaseList":       leaseList{},
		"LeaseExtended":   extended{},
		"LeaseCompletion": completion{},
		"LeaseFailure":    failure{},
		"LeaseProgress":   progressBody{},
		"RedriveRequest":  redriveBody{},
	}
}
