package e2e

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The Docker image's binary: built with CGO_ENABLED=0 it is static (no
// dynamic loader) and runs.
func TestStaticBinary(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "dtq")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-o", bin, "github.com/dtq-dev/dtq/cmd/dtq")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the CGO_ENABLED=0 binary asks for a dynamic loader: it is not static")
		}
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), "dtq") {
		t.Fatalf("dtq version: %v %s", err, out)
	}
}

// compose.yaml parses, and every command it runs and variable it sets is
// one the binary knows; Prometheus scrapes the ports the processes listen on.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("python3", "-c",
		"import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", "../compose.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("compose.yaml does not parse (python3 with yaml is installed by make test): %v\n%s", err, out)
	}
	var compose struct {
		Services map[string]struct {
			Command     []string          `json:"command"`
			Environment map[string]string `json:"environment"`
			Image       string            `json:"image"`
			Build       string            `json:"build"`
		} `json:"services"`
	}
	if err := json.Unmarshal(out, &compose); err != nil {
		t.Fatal(err)
	}
	deployment, err := os.ReadFile("../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"api", "worker"} {
		svc, ok := compose.Services[name]
		if !ok || svc.Build != "." || len(svc.Command) == 0 {
			t.Fatalf("service %s: %+v", name, svc)
		}
		help, err := exec.Command(binary, svc.Command[0], "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("dtq %s --help: %v", svc.Command[0], err)
		}
		for _, arg := range svc.Command[1:] {
			if flag, ok := strings.CutPrefix(arg, "--"); ok && !strings.Contains(string(help), "--"+flag+" ") {
				t.Errorf("service %s runs dtq %s with unknown flag --%s", name, svc.Command[0], flag)
			}
		}
		for env := range svc.Environment {
			if !strings.Contains(string(deployment), "`"+env+"`") {
				t.Errorf("service %s sets %s, which docs/deployment.md does not list", name, env)
			}
		}
	}
	prom, err := os.ReadFile("../deploy/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"api:8000"`, "port: 8001"} {
		if !strings.Contains(string(prom), want) {
			t.Errorf("deploy/prometheus.yml does not scrape %s", want)
		}
	}
	if _, ok := compose.Services["redis"]; !ok {
		t.Error("no redis service")
	}
}
