package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// scripts/demo.sh runs its six scenarios to the end with this binary.
func TestDemoScript(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../scripts/demo.sh")
	cmd.Env = append(cmd.Environ(), "DTQ_BIN="+binary, "DTQ_REDIS_URL=", "DTQ_API_URL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ok\x1b[0m  "); n < 6 || !strings.Contains(string(out), "all six scenarios passed") {
		t.Fatalf("demo.sh passed %d checks:\n%s", n, out)
	}
}
