package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
	"github.com/dtq-dev/dtq/examples/tasks"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"
)

// The files of deploy/, from this package's directory.
const (
	dashboardFile  = "../../deploy/grafana/dashboards/dtq.json"
	alertsFile     = "../../deploy/alerts.yml"
	prometheusFile = "../../deploy/prometheus.yml"
	datasourceFile = "../../deploy/grafana/provisioning/datasources/prometheus.yml"
	providerFile   = "../../deploy/grafana/provisioning/dashboards/dtq.yml"
	composeFile    = "../../compose.yaml"
)

// exportedMetrics returns every metric family a dtq process exports, with
// its type: the registry built as runProcess builds it, its names from the
// collectors' descriptors (a vector with no series yet is there too), their
// types from a scrape once an engine with a worker has used every metric.
func exportedMetrics(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	m, err := metrics.New(&metrics.Config{TaskTypes: tasks.Types()})
	if err != nil {
		t.Fatal(err)
	}
	client, err := dtq.NewClient(redisconn.Wrap(redistest.Embedded(t).Client), &dtq.Config{Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := collectAtScrape(m, dtq.NewAdmin(client)); err != nil {
		t.Fatal(err)
	}
	// A process relaying an outbox (--outbox) has its metrics too.
	if err := m.CollectOutbox(idleOutbox{}); err != nil {
		t.Fatal(err)
	}
	descs := make(chan *prometheus.Desc)
	go func() {
		m.Registry().Describe(descs)
		close(descs)
	}()
	fqName := regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)
	var names []string
	for d := range descs {
		if s := fqName.FindStringSubmatch(d.String()); s != nil {
			names = append(names, s[1])
		}
	}
	if !slices.Contains(names, "dtq_queue_depth") || !slices.Contains(names, "go_goroutines") {
		t.Fatalf("the registry's descriptors lack dtq_queue_depth or go_goroutines: %v", names)
	}

	w, err := dtq.NewWorker(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks.Register(w)
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.Stop(ctx)
	})
	if _, err := client.Enqueue(t.Context(), "echo", map[string]int{"n": 1}, nil); err != nil {
		t.Fatal(err)
	}
	// The series that a short healthy run does not create.
	if err := dtq.NewAdmin(client).SetLimits(t.Context(), "limited", dtq.LimitSpec{MaxRunning: 2}); err != nil {
		t.Fatal(err)
	}
	m.ClaimsThrottled("limited", 1)
	m.LimitOnFull("limited", dtq.CancelNewest, 1)
	m.DebounceJoined(dtq.TaskRef{Queue: dtq.DefaultQueue})
	m.TasksReclaimed(dtq.DefaultQueue, 0)
	m.RedisError("read", nil)
	m.ObserveHTTP("GET /health", 200, time.Millisecond)

	types := map[string]dto.MetricType{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		families, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			types[f.GetName()] = f.GetType()
		}
		var missing []string
		for _, n := range names {
			if _, ok := types[n]; !ok && strings.HasPrefix(n, "dtq_") {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("described but never scraped, so the test cannot tell their type (make exportedMetrics use them): %v", missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := map[string]dto.MetricType{}
	for _, n := range names {
		if ty, ok := types[n]; ok {
			out[n] = ty
		} else {
			out[n] = dto.MetricType_UNTYPED // a go_ or process_ metric of this platform that had no value
		}
	}
	return out
}

// idleOutbox is an outbox with nothing waiting, for the metrics' names.
type idleOutbox struct{}

func (idleOutbox) Stats(context.Context) (outbox.Stats, error) {
	return outbox.Stats{Active: true}, nil
}

var (
	promString = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	metricName = regexp.MustCompile(`\b(?:dtq|go|process)_[a-zA-Z0-9_]+`)
)

// metricNames returns the names of the binary's metrics (dtq_, go_ and
// process_) that a PromQL expression selects, string literals left out.
func metricNames(expr string) []string {
	return metricName.FindAllString(promString.ReplaceAllString(expr, `""`), -1)
}

// checkName says what is wrong with a metric name used in a query: not
// exported, a histogram without its suffix, or a suffix of a metric that
// has none.
func checkName(exported map[string]dto.MetricType, name string) error {
	if ty, ok := exported[name]; ok {
		if ty == dto.MetricType_HISTOGRAM {
			return fmt.Errorf("%s is a histogram: select %s_bucket, _sum or _count", name, name)
		}
		return nil
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		switch ty, found := exported[base]; {
		case !found:
		case ty == dto.MetricType_HISTOGRAM, ty == dto.MetricType_SUMMARY && suffix != "_bucket":
			return nil
		default:
			return fmt.Errorf("%s: %s is a %s, it has no %s series", name, base, ty, suffix)
		}
	}
	return fmt.Errorf("%s is not a metric the binary exports", name)
}

// grafanaPanel is what the test reads of a Grafana panel; a row holds its
// panels when it is collapsed.
type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	GridPos    struct{ H, W, X, Y int }
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaDatasource struct{ Type, UID string }

type grafanaDashboard struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string             `json:"name"`
			Type       string             `json:"type"`
			Query      json.RawMessage    `json:"query"`
			Definition string             `json:"definition"`
			Datasource *grafanaDatasource `json:"datasource"`
			Current    struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
}

// The Grafana dashboard is valid JSON; every panel queries Prometheus
// through the dashboard's data source variable, and every metric its
// queries (and its variables') name is one the binary exports, histograms
// by their series. Every dtq_ metric has a panel.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	exported := exportedMetrics(t)
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and schemaVersion 36 or later", d.UID, d.Title, d.SchemaVersion)
	}

	// The data source: a variable whose default is the provisioned uid.
	var provisioned struct {
		Datasources []struct{ UID, Type, URL string } `yaml:"datasources"`
	}
	readYAML(t, datasourceFile, &provisioned)
	if len(provisioned.Datasources) != 1 || provisioned.Datasources[0].Type != "prometheus" {
		t.Fatalf("%s: want one prometheus data source, got %+v", datasourceFile, provisioned.Datasources)
	}
	wantDS := grafanaDatasource{Type: "prometheus", UID: "${datasource}"}
	used := map[string]bool{}
	checkExpr := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 && !strings.Contains(expr, "ALERTS{") {
			t.Errorf("%s: %q names no metric of the binary", where, expr)
		}
		for _, n := range names {
			used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
			if err := checkName(exported, n); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		switch v.Type {
		case "datasource":
			if v.Name != "datasource" || string(v.Query) != `"prometheus"` || v.Current.Value != provisioned.Datasources[0].UID {
				t.Errorf("variable %s: want the datasource variable of type prometheus, default %q", v.Name, provisioned.Datasources[0].UID)
			}
		case "query":
			if v.Datasource == nil || *v.Datasource != wantDS {
				t.Errorf("variable %s: data source %+v, want %+v", v.Name, v.Datasource, wantDS)
			}
			var q struct{ Query string }
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
			}
			if q.Query != v.Definition {
				t.Errorf("variable %s: query %q and definition %q differ", v.Name, q.Query, v.Definition)
			}
			checkExpr("variable "+v.Name, q.Query)
		}
	}
	if !vars["datasource"] || !vars["queue"] {
		t.Errorf("variables %v: want datasource and queue", vars)
	}

	ids := map[int]bool{}
	var n int
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("%s: its id is 0 or not unique", where)
			}
			ids[p.ID] = true
			if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("%s: gridPos %+v outside the 24 columns", where, g)
			}
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			n++
			if p.Title == "" || p.Datasource == nil || *p.Datasource != wantDS {
				t.Errorf("%s: want a title and data source %+v, got %+v", where, wantDS, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no query", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.RefID == "" || refs[tg.RefID] || tg.Datasource == nil || *tg.Datasource != wantDS {
					t.Errorf("%s: target %q: want a unique refId and data source %+v", where, tg.RefID, wantDS)
				}
				refs[tg.RefID] = true
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s: target %s has no expr", where, tg.RefID)
					continue
				}
				checkExpr(where, tg.Expr)
			}
		}
	}
	walk(d.Panels)
	if n < 30 {
		t.Errorf("%d panels with queries, want at least 30", n)
	}
	for name := range exported {
		if strings.HasPrefix(name, "dtq_") && !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}

// alertRules reads deploy/alerts.yml.
func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string      `yaml:"name"`
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, alertsFile, &f)
	var out []alertRule
	for _, g := range f.Groups {
		if g.Name == "" {
			t.Errorf("%s: a group without a name", alertsFile)
		}
		out = append(out, g.Rules...)
	}
	return out
}

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// Every alerting rule names metrics the binary exports, has a severity, a
// summary and a description, and is documented; the operator's three are
// there.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	exported := exportedMetrics(t)
	rules := alertRules(t)
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Alert == "" || seen[r.Alert] {
			t.Errorf("rule %q: want an alert name, unique", r.Alert)
		}
		seen[r.Alert] = true
		if r.For != "" {
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
			}
		}
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: want a summary and a description", r.Alert)
		}
		if !strings.Contains(string(doc), "`"+r.Alert+"`") {
			t.Errorf("%s is not in docs/observability.md", r.Alert)
		}
		names := metricNames(r.Expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric of the binary", r.Alert, r.Expr)
		}
		for _, n := range names {
			if err := checkName(exported, n); err != nil {
				t.Errorf("%s: %v", r.Alert, err)
			}
		}
	}
	for _, want := range []string{"DtqQueueBacklogGrowing", "DtqDeadLettersAppearing", "DtqNoWorkers"} {
		if !seen[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

// Every metric family the binary exports under dtq_ has its row in
// docs/observability.md.
func TestObservabilityDocListsEveryMetric(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range exportedMetrics(t) {
		if strings.HasPrefix(name, "dtq_") && !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("docs/observability.md has no row for %s", name)
		}
	}
}

// compose.yaml mounts what deploy/ configures: Prometheus's rule files
// beside its configuration, and Grafana's provisioning with the dashboards
// where the dashboard provider looks for them. No Docker engine runs here,
// so this is the check that the pieces fit.
func TestComposeProvisionsGrafanaAndAlerts(t *testing.T) {
	t.Parallel()
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Volumes     []string          `yaml:"volumes"`
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	readYAML(t, composeFile, &compose)
	// mounts maps a container path to the repository path mounted there.
	mounts := func(service string) map[string]string {
		svc, ok := compose.Services[service]
		if !ok {
			t.Fatalf("compose.yaml has no service %s", service)
		}
		out := map[string]string{}
		for _, v := range svc.Volumes {
			parts := strings.Split(v, ":")
			if !strings.HasPrefix(parts[0], "./") {
				continue // a named volume
			}
			if len(parts) != 3 || parts[2] != "ro" {
				t.Errorf("service %s: volume %q: want ./host:container:ro", service, v)
				continue
			}
			if _, err := os.Stat(path.Join("../..", parts[0])); err != nil {
				t.Errorf("service %s mounts %s: %v", service, parts[0], err)
			}
			out[parts[1]] = path.Clean(parts[0])
		}
		return out
	}

	prom := mounts("prometheus")
	var promCfg struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	readYAML(t, prometheusFile, &promCfg)
	if prom["/etc/prometheus/prometheus.yml"] != "deploy/prometheus.yml" {
		t.Errorf("prometheus does not run deploy/prometheus.yml: %v", prom)
	}
	if !slices.Contains(promCfg.RuleFiles, path.Base(alertsFile)) {
		t.Errorf("deploy/prometheus.yml rule_files %v lack %s", promCfg.RuleFiles, path.Base(alertsFile))
	}
	for _, f := range promCfg.RuleFiles {
		if prom[path.Join("/etc/prometheus", f)] != path.Join("deploy", f) {
			t.Errorf("rule file %s is not mounted beside prometheus.yml: %v", f, prom)
		}
	}

	graf := compose.Services["grafana"]
	if !strings.HasPrefix(graf.Image, "grafana/grafana:11.") || !slices.Contains(graf.Ports, "3000:3000") {
		t.Errorf("grafana: image %q ports %v, want grafana/grafana:11.x (pinned) on 3000", graf.Image, graf.Ports)
	}
	g := mounts("grafana")
	for _, dir := range []string{"datasources", "dashboards"} {
		if g["/etc/grafana/provisioning/"+dir] != "deploy/grafana/provisioning/"+dir {
			t.Errorf("grafana does not mount deploy/grafana/provisioning/%s: %v", dir, g)
		}
	}
	var providers struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, providerFile, &providers)
	if len(providers.Providers) != 1 || providers.Providers[0].Type != "file" {
		t.Fatalf("%s: want one file provider, got %+v", providerFile, providers.Providers)
	}
	dir := providers.Providers[0].Options.Path
	if g[dir] != path.Dir(strings.TrimPrefix(dashboardFile, "../../")) {
		t.Errorf("the dashboard provider reads %s, where compose mounts %q", dir, g[dir])
	}
	if home := graf.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != path.Join(dir, path.Base(dashboardFile)) {
		t.Errorf("the home dashboard is %q, not the provisioned dtq.json", home)
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
