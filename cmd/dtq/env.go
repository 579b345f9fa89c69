package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envAnnotation marks a flag with the environment variable that sets it.
const envAnnotation = "dtq-env"

// envOr returns the environment variable name, or def when it is unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// bindEnv lets the environment variable env set flag when the command line
// does not, and names it in the flag's help.
func bindEnv(cmd *cobra.Command, flag, env string) {
	f := cmd.Flags().Lookup(flag)
	if f == nil {
		panic("bindEnv: no flag " + flag)
	}
	f.Usage += " [" + env + "]"
	if err := cmd.Flags().SetAnnotation(flag, envAnnotation, []string{env}); err != nil {
		panic("bindEnv: " + err.Error())
	}
}

// applyEnv sets every flag of cmd that the command line left alone from its
// environment variable, if that is set. A bad value is an error naming the
// variable.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		env := f.Annotations[envAnnotation]
		if err != nil || len(env) == 0 || f.Changed {
			return
		}
		v, ok := os.LookupEnv(env[0])
		if !ok {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %v", env[0], v, e)
		}
	})
	return err
}

// envFlags lists the environment variables of cmd's flags, sorted, as
// "ENV --flag".
func envFlags(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if env := f.Annotations[envAnnotation]; len(env) > 0 {
			out = append(out, env[0]+" --"+f.Name)
		}
	})
	sort.Strings(out)
	return out
}
