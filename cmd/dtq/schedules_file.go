package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/dtq-dev/dtq"
	"go.yaml.in/yaml/v3"
)

// schedulesFile is the declarative file of `--schedules`:
//
//	schedules:
//	  - name: nightly-report
//	    queue: reports          # default "default"
//	    cron: "30 2 * * *"
//	    time_zone: Europe/Berlin
//	    task_type: report
//	    payload: {kind: daily}  # any YAML value, sent as JSON
//	    priority: 5
//	    max_attempts: 3
//	    timeout: 1m
//	    missed: catch_up
//	    catch_up_max: 3
//	    paused: false
type schedulesFile struct {
	Schedules []fileSchedule `yaml:"schedules"`
}

type fileSchedule struct {
	Name        string        `yaml:"name"`
	Queue       string        `yaml:"queue"`
	Cron        string        `yaml:"cron"`
	TimeZone    string        `yaml:"time_zone"`
	TaskType    string        `yaml:"task_type"`
	Payload     any           `yaml:"payload"`
	Priority    *int          `yaml:"priority"`
	MaxAttempts int           `yaml:"max_attempts"`
	Timeout     time.Duration `yaml:"timeout"`
	Missed      string        `yaml:"missed"`
	CatchUpMax  int           `yaml:"catch_up_max"`
	Paused      bool          `yaml:"paused"`
}

// loadSchedules reads and checks the file at path: strict YAML (no
// unknown keys), each schedule named once per queue.
func loadSchedules(path string) ([]dtq.Schedule, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--schedules: %w", err)
	}
	var f schedulesFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--schedules %s: %s", path, yamlProblem(err))
	}
	seen := map[string]bool{}
	out := make([]dtq.Schedule, 0, len(f.Schedules))
	for i, s := range f.Schedules {
		queue := s.Queue
		if queue == "" {
			queue = dtq.DefaultQueue
		}
		key := queue + "/" + s.Name
		if seen[key] {
			return nil, fmt.Errorf("--schedules %s: schedule %d: %s is named twice", path, i+1, key)
		}
		seen[key] = true
		var payload json.RawMessage
		if s.Payload != nil {
			b, err := json.Marshal(jsonable(s.Payload))
			if err != nil {
				return nil, fmt.Errorf("--schedules %s: schedule %s: payload: %v", path, key, err)
			}
			payload = b
		}
		out = append(out, dtq.Schedule{Name: s.Name, Queue: queue, Cron: s.Cron, TimeZone: s.TimeZone, TaskType: s.TaskType,
			Payload: payload, Priority: s.Priority, MaxAttempts: s.MaxAttempts, Timeout: s.Timeout,
			Missed: dtq.MissedTicks(s.Missed), CatchUpMax: s.CatchUpMax, Paused: s.Paused})
	}
	return out, nil
}

// yamlProblem says on one line what the YAML decoder refused, in the
// file's terms (keys, not Go types).
func yamlProblem(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	var out []string
	for _, e := range te.Errors {
		e = unknownKey.ReplaceAllString(e, "unknown key $1")
		if m := badValue.FindStringSubmatch(e); m != nil {
			want := map[string]string{"time.Duration": "a duration (e.g. 90s, 1m)", "int": "an integer", "*int": "an integer",
				"bool": "true or false", "string": "a string"}[m[3]]
			if want == "" {
				want = "of the right type"
			}
			e = m[1] + m[2] + " is not " + want
		}
		e = strings.ReplaceAll(e, "main.fileSchedule", "a schedule")
		e = strings.ReplaceAll(e, "main.schedulesFile", "the file")
		out = append(out, e)
	}
	return strings.Join(out, "; ")
}

// badValue matches the decoder's message for a value of the wrong type.
var badValue = regexp.MustCompile(`^(line \d+: )cannot unmarshal !!\w+ (.*) into (\S+)$`)

// unknownKey matches the decoder's message for a key no field takes.
var unknownKey = regexp.MustCompile(`field (\S+) not found in type \S+`)

// jsonable turns YAML's map[string]any / map[any]any trees into values
// encoding/json takes.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// applySchedules creates or updates every schedule of the file (the others
// stay as they are) and logs what changed. A schedule the engine refuses
// stops it, before anything is written, with an error naming the file and
// the schedule.
func applySchedules(ctx context.Context, log *slog.Logger, a *dtq.Admin, path string) error {
	list, err := loadSchedules(path)
	if err != nil {
		return err
	}
	for _, s := range list { // all or nothing: check every one first
		if err := a.CheckSchedule(s); err != nil {
			return fmt.Errorf("--schedules %s: schedule %s/%s: %v", path, s.Queue, s.Name, err)
		}
	}
	var created, updated, unchanged int
	for _, s := range list {
		old, err := a.GetSchedule(ctx, s.Queue, s.Name)
		if err != nil && !errors.Is(err, dtq.ErrScheduleNotFound) {
			var ve *dtq.ValidationError
			if errors.As(err, &ve) {
				return fmt.Errorf("--schedules %s: schedule %s/%s: %v", path, s.Queue, s.Name, err)
			}
			return err
		}
		in, err := a.UpsertSchedule(ctx, s)
		if err != nil {
			return fmt.Errorf("--schedules %s: schedule %s/%s: %v", path, s.Queue, s.Name, err)
		}
		switch {
		case old == nil:
			created++
			log.Info("schedule created", "queue", s.Queue, "schedule", s.Name, "cron", in.Cron, "time_zone", in.TimeZone)
		case !reflect.DeepEqual(in.Schedule, old.Schedule): // not UpdatedAt: an update can fall in the creation's millisecond
			updated++
			log.Info("schedule updated", "queue", s.Queue, "schedule", s.Name, "cron", in.Cron, "time_zone", in.TimeZone)
		default:
			unchanged++
		}
	}
	log.Info("schedules file applied", "file", path, "created", created, "updated", updated, "unchanged", unchanged)
	return nil
}
