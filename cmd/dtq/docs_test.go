package main

import (
	"os"
	"strings"
	"testing"
)

// docs/deployment.md has one table of every process setting: each flag
// with its environment variable.
func TestDeploymentDocListsEverySetting(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []func() []string{
		func() []string { return envFlags(newServeCmd(nil, nil)) },
		func() []string { return envFlags(newAPICmd(nil, nil)) },
		func() []string { return envFlags(newWorkerCmd(nil, nil)) },
		func() []string { return envFlags(newRelayCmd(nil, nil)) },
	} {
		for _, ef := range cmd() {
			env, flag, _ := strings.Cut(ef, " ")
			row := "| `" + env + "` | `" + flag + "` |"
			if !strings.Contains(string(doc), row) {
				t.Errorf("docs/deployment.md has no row %q", row)
			}
		}
	}
}
