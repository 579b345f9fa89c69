//go:build faults

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// The binaries under test, built once (without -race: the processes must
// keep up with the load on two cores; the unit tests of the harness run
// with -race in make test).
var bins struct{ dtq, worker string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dtq-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dtq, bins.worker = filepath.Join(dir, "dtq"), filepath.Join(dir, "worker")
	for out, pkg := range map[string]string{bins.dtq: "github.com/dtq-dev/dtq/cmd/dtq", bins.worker: "github.com/dtq-dev/dtq/faults/worker"} {
		if err := proctest.BuildPackage(out, pkg, nil); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	began := time.Now()
	code := m.Run()
	if err := writeReport(time.Since(began)); err != nil {
		fmt.Fprintln(os.Stderr, "faults: writing the report:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a child process of the suite: a `dtq api` or a worker.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // its stderr
	done chan struct{}
	// faulted is called with each signal but SIGCONT sent to it (nil: none)
	faulted func()
}

// startProc starts bin with args, its stderr in dir/<name>.stderr, and
// waits until ready returns true for a line of its stdout (worker) or
// stderr (api). It is killed at cleanup (and with the test binary).
func startProc(t *testing.T, dir, name, bin string, args []string, fromStderr bool, ready func(line string) bool) (*proc, string) {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".stderr"), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	var pipe *os.File
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pipe = r
	if fromStderr {
		p.cmd.Stderr, p.cmd.Stdout = w, logf
	} else {
		p.cmd.Stdout, p.cmd.Stderr = w, logf
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := make(chan string, 16)
	go func() {
		defer logf.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			if fromStderr {
				fmt.Fprintln(logf, sc.Text())
			}
			if !sent && ready(sc.Text()) {
				lines <- sc.Text()
				sent = true
			}
		}
		close(lines)
	}()
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	select {
	case line, ok := <-lines:
		if !ok {
			<-p.done
			t.Fatalf("%s exited before it was ready (%v):\n%s", name, p.cmd.ProcessState, p.stderr())
		}
		return p, line
	case <-time.After(60 * time.Second):
		t.Fatalf("%s not ready after 60s:\n%s", name, p.stderr())
	}
	return nil, ""
}

func (p *proc) stderr() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func (p *proc) signal(sig syscall.Signal) error {
	if sig != syscall.SIGCONT && p.faulted != nil {
		p.faulted()
	}
	return p.cmd.Process.Signal(sig)
}

// kill SIGKILLs the process (a no-op once it exited) and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.cmd.Process.Kill()
	<-p.done
}

// wait waits up to d for the process to exit.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// state is the process's state letter in /proc (R, S, T for stopped, …).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rigOpts shape a scenario's processes.
type rigOpts struct {
	workers     int           // worker processes; defaults to 2
	concurrency int           // per worker; defaults to 8
	visibility  time.Duration // defaults to 10s
	shutdown    time.Duration // worker grace on SIGTERM; defaults to 5s
	durable     int           // --durable-replicas of every process
	procURL     string        // the URL the processes use, when not the checker's (a proxy)
	deadline    time.Duration // of one submission; defaults to 30s
}

// rig is one scenario's system: a `dtq api`, worker processes, the ledger
// of submissions and a direct client for reading the outcome.
type rig struct {
	t      *testing.T
	o      rigOpts
	dir    string
	ns     string
	url    string // what the processes use
	client *dtq.Client
	api    *proc
	apiURL string
	ledger *Ledger

	// cancelled: tasks the scenario cancelled while they ran (Input.Cancelled)
	cancelled map[string]bool

	mu      sync.Mutex
	workers map[string]*proc
	ids     []string        // every worker id ever started
	faulted map[string]bool // the worker ids the scenario signalled (killed, froze, stopped)
}

const queue = "faults"

// newRig starts the api and the workers on the Redis at checkURL (or
// o.procURL for the processes).
func newRig(t *testing.T, checkURL string, o rigOpts) *rig {
	t.Helper()
	if o.workers == 0 {
		o.workers = 2
	}
	if o.concurrency == 0 {
		o.concurrency = 8
	}
	if o.visibility == 0 {
		o.visibility = 10 * time.Second
	}
	if o.shutdown == 0 {
		o.shutdown = 5 * time.Second
	}
	r := &rig{t: t, o: o, dir: t.TempDir(), ns: redistest.Namespace(t), url: checkURL, ledger: &Ledger{}, workers: map[string]*proc{},
		faulted: map[string]bool{}}
	if o.procURL != "" {
		r.url = o.procURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := redisconn.Connect(ctx, checkURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	if r.client, err = dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Namespace: r.ns}); err != nil {
		t.Fatal(err)
	}
	args := []string{"api", "--addr", "127.0.0.1:0", "--redis", r.url, "--namespace", r.ns,
		"--durable-replicas", fmt.Sprint(o.durable), "--shutdown-timeout", "2s"}
	var line string
	r.api, line = startProc(t, r.dir, "api", bins.dtq, args, true, func(l string) bool { return strings.Contains(l, `"msg":"dtq is ready"`) })
	var rec struct{ Addr string }
	json.Unmarshal([]byte(line), &rec)
	r.apiURL = "http://" + rec.Addr
	for i := range o.workers {
		r.startWorker(fmt.Sprintf("w%d", i+1))
	}
	return r
}

// startWorker starts a worker process with id (which names its logs).
func (r *rig) startWorker(id string) *proc {
	r.t.Helper()
	args := []string{"-redis", r.url, "-namespace", r.ns, "-queue", queue, "-id", id, "-dir", r.dir,
		"-concurrency", fmt.Sprint(r.o.concurrency), "-visibility", r.o.visibility.String(),
		"-shutdown", r.o.shutdown.String(), "-durable-replicas", fmt.Sprint(r.o.durable)}
	p, _ := startProc(r.t, r.dir, id, bins.worker, args, false, func(l string) bool { return l == "ready" })
	p.faulted = func() {
		r.mu.Lock()
		r.faulted[id] = true
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.workers[id] = p
	r.ids = append(r.ids, id)
	r.mu.Unlock()
	return p
}

// killWorkersAndRedis runs the fault sequence of the high-rate scenarios
// under load: worker w1 SIGKILLed (and replaced), a second of load,
// redis-server srv SIGKILLed, kept down for outage and restarted on its
// AOF, a second of load, worker w2 SIGKILLed. It returns how many
// executions the kills interrupted, and when Redis went down and was back.
func (r *rig) killWorkersAndRedis(srv *redistest.Server, outage time.Duration) (injected int, downAt, up time.Time) {
	r.t.Helper()
	injected += r.killAndRestart("w1", 1)
	time.Sleep(time.Second) // load between the faults, not a wait for a condition
	downAt = time.Now()
	if err := srv.Kill(); err != nil {
		r.t.Fatal(err)
	}
	// Down a while, as a host restarting it would leave it (well under the
	// visibility timeout): every call in flight at the kill lost its answer.
	time.Sleep(outage)
	if err := srv.Restart(); err != nil {
		r.t.Fatal(err)
	}
	up = time.Now()
	time.Sleep(time.Second) // load between the faults
	injected += r.killAndRestart("w2", 2)
	return injected, downAt, up
}

// killAndRestart SIGKILLs worker id, starts "<id>.<round>" in its place
// (under id) and returns how many executions the kill interrupted.
func (r *rig) killAndRestart(id string, round int) int {
	r.t.Helper()
	victim := r.worker(id)
	victim.signal(syscall.SIGKILL)
	if !victim.wait(10 * time.Second) {
		r.t.Fatalf("%s still runs 10s after SIGKILL", id)
	}
	interrupted := len(Unrecorded(r.trace(id)))
	next := fmt.Sprintf("%s.%d", id, round)
	r.startWorker(next)
	r.mu.Lock()
	r.workers[id] = r.workers[next]
	r.mu.Unlock()
	return interrupted
}

func (r *rig) worker(id string) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workers[id]
}

// trace reads worker id's trace.
func (r *rig) trace(id string) []TraceEvent {
	r.t.Helper()
	tr, err := ReadTrace(r.dir, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return tr
}

// traces reads every worker's trace, merged in time order.
func (r *rig) traces() []TraceEvent {
	r.mu.Lock()
	ids := append([]string(nil), r.ids...)
	r.mu.Unlock()
	var all []TraceEvent
	for _, id := range ids {
		all = append(all, r.trace(id)...)
	}
	sortTrace(all)
	return all
}

func sortTrace(tr []TraceEvent) {
	for i := 1; i < len(tr); i++ {
		for j := i; j > 0 && tr[j].At.Before(tr[j-1].At); j-- {
			tr[j], tr[j-1] = tr[j-1], tr[j]
		}
	}
}

// waitInFlight waits until worker id runs at least one handler and returns
// the running tasks.
func (r *rig) waitInFlight(id string) []string {
	r.t.Helper()
	var running []string
	waitFor(r.t, 30*time.Second, id+" running a handler", func() bool {
		running = InFlight(r.trace(id))
		return len(running) > 0
	})
	return running
}

// loadOpts shape the submissions of a run.
type loadOpts struct {
	rate    int // per second; defaults to 40
	conc    int // submissions in progress at most; defaults to 32
	payload func(n int) Payload
	lib     bool // submit through the library instead of the api process
	ok      func(p Payload, s Submit)
}

// startLoad submits until stop is called; stop waits for the submissions
// in progress.
func (r *rig) startLoad(o loadOpts) (stop func()) {
	var sub Submitter = &HTTPSubmitter{URL: r.apiURL, Queue: queue, Retry: Retry{Deadline: r.o.deadline}}
	if o.lib {
		sub = &LibSubmitter{Client: r.client, Queue: queue, Retry: Retry{Deadline: r.o.deadline}}
	}
	if o.rate == 0 {
		o.rate = 40
	}
	if o.payload == nil {
		o.payload = func(n int) Payload { return Payload{SleepMS: 20 + n*37%180} }
	}
	l := &Load{Submitter: sub, Ledger: r.ledger, Prefix: r.ns, Rate: o.rate, Concurrency: o.conc, Payload: o.payload, OK: o.ok}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	r.t.Cleanup(stop)
	return stop
}

// okAfter waits until n submissions sent after since answered OK: the
// system accepts work again.
func (r *rig) okAfter(since time.Time, n int, d time.Duration) {
	r.t.Helper()
	waitFor(r.t, d, fmt.Sprintf("%d submissions OK after the fault", n), func() bool {
		return r.ledger.Count(func(s *Submit) bool { return s.Answer == OK && !s.Sent.Before(since) }) >= n
	})
}

// listedAll reports whether s lists every task the ledger has that still
// exists: a paged List reads its sections (running and queued, then
// scheduled, dead, finished) one after the other, so a task promoted from
// a later section into one already read while it pages — a retry coming
// due — is missed by that read though it runs on. A task the list missed
// that Get finds means the state is not final yet; one Get does not find
// is gone (the check then reports it).
func (r *rig) listedAll(ctx context.Context, s *State) bool {
	listed := make(map[string]bool, len(s.Tasks))
	for _, t := range s.Tasks {
		listed[t.ID] = true
	}
	for _, sub := range r.ledger.Entries() {
		if sub.TaskID == "" || listed[sub.TaskID] {
			continue
		}
		if _, err := r.client.Get(ctx, sub.TaskID); !errors.Is(err, dtq.ErrNotFound) {
			return false
		}
	}
	return true
}

// finish drains the run, checks it and returns the report: it waits until
// no task of the queue is unfinished, then reads Redis and the effect
// logs.
func (r *rig) finish(flushed map[string]dtq.Status) *Report {
	r.t.Helper()
	var st *State
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := ReadState(ctx, r.client, queue)
		if err == nil && len(s.Unfinished()) == 0 && r.listedAll(ctx, s) {
			cancel()
			st = s
			break
		}
		cancel()
		if time.Now().After(deadline) {
			if err != nil {
				r.t.Fatalf("reading the final state: %v", err)
			}
			r.t.Errorf("tasks still unfinished 90s after the load: %v", s.Unfinished())
			st = s
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	effects, err := ReadEffects(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	rep := Check(Input{Ledger: r.ledger.Entries(), Effects: effects, State: st, Flushed: flushed, Cancelled: r.cancelled})
	if flushed == nil {
		// The counters against the tasks (a run that lost data on purpose
		// lost counts with it).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		stats, err := dtq.NewAdmin(r.client).Stats(ctx, queue)
		cancel()
		if err != nil {
			r.t.Fatalf("reading the queue's counters: %v", err)
		}
		rep.CountersOff = CheckCounters(st, stats)
		rep.CountersChecked = true
	}
	r.mu.Lock()
	traces, faulted := map[string][]TraceEvent{}, map[string]bool{}
	for _, id := range r.ids {
		faulted[id] = r.faulted[id]
	}
	ids := append([]string(nil), r.ids...)
	r.mu.Unlock()
	for _, id := range ids {
		traces[id] = r.trace(id)
	}
	rep.Phantom = PhantomCrashes(st, traces, faulted)
	r.explain(rep)
	if os.Getenv("DTQ_FAULTS_DEBUG") != "" {
		n := 0
		for _, l := range strings.Split(r.api.stderr(), "\n") {
			if strings.Contains(l, "request failed") && n < 5 {
				r.t.Log(l)
				n++
			}
		}
	}
	return rep
}

// explain logs, for each duplicated or unexpected task, its history and
// effects, and the ledger entry of its key: the facts behind a verdict.
func (r *rig) explain(rep *Report) {
	r.t.Helper()
	effects, _ := ReadEffects(r.dir)
	entries := r.ledger.Entries()
	for _, line := range append(append([]string(nil), rep.DuplicatedTasks...), rep.Unexpected...) {
		id := strings.Fields(line)[0]
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n", line)
		if task, err := r.client.Get(context.Background(), id); err == nil {
			fmt.Fprintf(&b, "  task: %s run by %s, attempt %d, crashes %d\n", task.Status, task.Worker, task.Attempt, task.Crashes)
			for _, x := range task.History {
				fmt.Fprintf(&b, "    run %d by %s %s→%s %s %s\n", x.Run, x.Worker, x.StartedAt.Format("15:04:05.000"),
					x.FinishedAt.Format("15:04:05.000"), x.Outcome, x.Error)
			}
		} else {
			fmt.Fprintf(&b, "  task: %v\n", err)
		}
		key := ""
		for _, e := range effects {
			if e.TaskID == id {
				key = e.Key
				fmt.Fprintf(&b, "  effect by %s (attempt %d, crashes %d) started %s, done %s\n", e.Worker, e.Attempt, e.Crashes,
					e.Start.Format("15:04:05.000"), e.At.Format("15:04:05.000"))
			}
		}
		r.mu.Lock()
		procs := append([]*proc{r.api}, func() (ps []*proc) {
			for _, id := range r.ids {
				if p, err := os.Stat(filepath.Join(r.dir, id+".stderr")); err == nil && p.Size() > 0 {
					ps = append(ps, &proc{name: id, log: filepath.Join(r.dir, id+".stderr")})
				}
			}
			return ps
		}()...)
		r.mu.Unlock()
		for _, p := range procs {
			for _, l := range strings.Split(p.stderr(), "\n") {
				if strings.Contains(l, id) {
					fmt.Fprintf(&b, "  %s log: %s\n", p.name, l)
				}
			}
		}
		for _, s := range entries {
			if s.Key == key {
				fmt.Fprintf(&b, "  submission: %s %s, %d attempts (%d ambiguous), first %s, first error %q\n", s.Answer, s.TaskID,
					s.Attempts, s.Ambiguous, s.First.Format("15:04:05.000"), s.FirstErr)
			}
		}
		r.t.Log(b.String())
	}
}

// assert checks the invariants: no unexpected task or effect, no multiple
// terminal state, no bad dead letter, duplicated executions within the
// injected worker faults, and — when Redis keeps its data — nothing lost.
func assertInvariants(t *testing.T, rep *Report, injected int, keepsData bool) {
	t.Helper()
	if rep.OK == 0 {
		t.Errorf("no submission succeeded: the run proves nothing")
	}
	if keepsData && len(rep.Lost) > 0 {
		t.Errorf("lost %d tasks:\n%s", len(rep.Lost), strings.Join(rep.Lost, "\n"))
	}
	if len(rep.Unexpected) > 0 {
		t.Errorf("unexpected:\n%s", strings.Join(rep.Unexpected, "\n"))
	}
	if len(rep.MultipleTerminal) > 0 {
		t.Errorf("multiple terminal states:\n%s", strings.Join(rep.MultipleTerminal, "\n"))
	}
	if len(rep.BadDead) > 0 {
		t.Errorf("bad dead letters:\n%s", strings.Join(rep.BadDead, "\n"))
	}
	if len(rep.Uncancelled) > 0 {
		t.Errorf("cancelled tasks that did not end CANCELLED:\n%s", strings.Join(rep.Uncancelled, "\n"))
	}
	if len(rep.CountersOff) > 0 {
		t.Errorf("counters off after the run:\n%s", strings.Join(rep.CountersOff, "\n"))
	}
	if rep.Duplicated > injected {
		t.Errorf("%d duplicated executions, more than the %d injected worker faults:\n%s", rep.Duplicated, injected,
			strings.Join(rep.DuplicatedTasks, "\n"))
	}
}

// Row is one line of the results table.
type Row struct {
	Scenario string
	Rep      *Report
	Injected int           // worker executions the scenario interrupted
	Recovery time.Duration // -1: not measured
	Notes    string
	Failed   bool
}

var results struct {
	mu   sync.Mutex
	rows []Row
}

// record adds the scenario's row to the report (once the test has run, so
// its pass or fail is known).
func record(t *testing.T, row Row) {
	t.Cleanup(func() {
		row.Failed = t.Failed()
		results.mu.Lock()
		results.rows = append(results.rows, row)
		results.mu.Unlock()
	})
	t.Logf("%s: submitted %d, ok %d, failed %d, unknown %d (written %d), lost %d, duplicated %d (injected %d), unexpected %d, multiple terminal %d, bad dead %d, counters off %d, phantom crashes %d, recovery %v; %s",
		row.Scenario, row.Rep.Submitted, row.Rep.OK, row.Rep.Failed, row.Rep.Unknown, row.Rep.UnknownWritten, len(row.Rep.Lost),
		row.Rep.Duplicated, row.Injected, len(row.Rep.Unexpected), len(row.Rep.MultipleTerminal), len(row.Rep.BadDead),
		len(row.Rep.CountersOff), len(row.Rep.Phantom), row.Recovery, row.Notes)
	for _, l := range row.Rep.Phantom {
		t.Logf("phantom crash: %s", l)
	}
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "—"
	}
	return d.Round(10 * time.Millisecond).String()
}

// writeReport writes the results table as markdown to $DTQ_FAULTS_REPORT
// (default last-run.md in the package directory).
func writeReport(took time.Duration) error {
	results.mu.Lock()
	defer results.mu.Unlock()
	if len(results.rows) == 0 {
		return nil
	}
	// In scenario order (Go runs the test files alphabetically).
	sort.SliceStable(results.rows, func(i, j int) bool {
		a, b := results.rows[i].Scenario, results.rows[j].Scenario
		na, _ := strconv.Atoi(strings.Fields(a)[0][:len(strings.TrimRight(strings.Fields(a)[0], "abcdefgh"))])
		nb, _ := strconv.Atoi(strings.Fields(b)[0][:len(strings.TrimRight(strings.Fields(b)[0], "abcdefgh"))])
		if na != nb {
			return na < nb
		}
		return a < b
	})
	path := os.Getenv("DTQ_FAULTS_REPORT")
	if path == "" {
		path = "last-run.md"
	}
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "Run of %s on %s (%s/%s, %d CPUs, %s, %s), %d scenarios in %v.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		redisVersion(), len(results.rows), took.Round(time.Second))
	b.WriteString("| scenario | submitted | ok | not ok (failed / unknown, written) | lost | duplicated (injected) | unexpected | multiple terminal | bad dead | counters | phantom crashes | recovery | result | notes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range results.rows {
		r := row.Rep
		verdict := "pass"
		if row.Failed {
			verdict = "**FAIL**"
		}
		counters := "—"
		switch {
		case len(r.CountersOff) > 0:
			counters = fmt.Sprintf("%d off", len(r.CountersOff))
		case r.CountersChecked:
			counters = "exact"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d / %d, %d | %d | %d (%d) | %d | %d | %d | %s | %d | %s | %s | %s |\n",
			row.Scenario, r.Submitted, r.OK, r.Failed, r.Unknown, r.UnknownWritten, len(r.Lost), r.Duplicated, row.Injected,
			len(r.Unexpected), len(r.MultipleTerminal), len(r.BadDead), counters, len(r.Phantom), fmtDur(row.Recovery), verdict, row.Notes)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return "redis-server ?"
	}
	f := strings.Fields(string(out))
	for _, x := range f {
		if v, ok := strings.CutPrefix(x, "v="); ok {
			return "Redis " + v
		}
	}
	return strings.TrimSpace(string(out))
}
