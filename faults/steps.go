package faults

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// StepEvent is one line of a worker's step log (steps-<worker>.log): a
// durable step's fn ran (F), or the step returned, its result recorded (K).
type StepEvent struct {
	Kind   byte // 'F' or 'K'
	TaskID string
	Step   string
	Worker string
	At     time.Time
}

// StepsFile is the path of worker's step log in dir.
func StepsFile(dir, worker string) string { return filepath.Join(dir, "steps-"+worker+".log") }

// StepLine is the line of a step event: "<kind> <task> <step> <unix ns>".
func StepLine(kind byte, taskID, step string, at time.Time) string {
	return string(kind) + " " + taskID + " " + step + " " + strconv.FormatInt(at.UnixNano(), 10) + "\n"
}

// ReadSteps reads every step log in dir (the files steps-*.log), in time
// order.
func ReadSteps(dir string) ([]StepEvent, error) {
	var out []StepEvent
	err := eachLog(dir, "steps", func(worker string, r io.Reader) error {
		lines, err := completeLines(r)
		if err != nil {
			return err
		}
		for i, l := range lines {
			fl := strings.Fields(l)
			if len(fl) != 4 || (fl[0] != "F" && fl[0] != "K") {
				return fmt.Errorf("faults: step log %s line %d: %q", worker, i+1, l)
			}
			ns, err := strconv.ParseInt(fl[3], 10, 64)
			if err != nil {
				return fmt.Errorf("faults: step log %s line %d: %w", worker, i+1, err)
			}
			out = append(out, StepEvent{Kind: fl[0][0], TaskID: fl[1], Step: fl[2], Worker: worker, At: time.Unix(0, ns)})
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, err
}

// StepsRerun returns the steps whose fn ran after an execution had
// recorded the step ("<task> <step>: …"), sorted: a recorded step must
// never run again. It also returns how many step fns ran and how many
// steps were recorded.
func StepsRerun(events []StepEvent) (rerun []string, ran, recorded int) {
	done := map[string]StepEvent{}
	for _, e := range events {
		k := e.TaskID + " " + e.Step
		switch e.Kind {
		case 'F':
			ran++
			if d, ok := done[k]; ok {
				rerun = append(rerun, fmt.Sprintf("%s: ran on %s at %s, recorded on %s at %s", k, e.Worker,
					e.At.Format(time.StampMicro), d.Worker, d.At.Format(time.StampMicro)))
			}
		case 'K':
			if _, ok := done[k]; !ok {
				recorded++
				done[k] = e
			}
		}
	}
	sort.Strings(rerun)
	return rerun, ran, recorded
}
