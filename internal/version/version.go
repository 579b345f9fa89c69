// Package version reports the version of the dtq build.
package version

import "runtime/debug"

// Version is set at link time with -ldflags "-X ...version.Version=v1.2.3";
// otherwise it comes from the module build info, or "dev".
var Version = ""

// String returns the build's version.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
