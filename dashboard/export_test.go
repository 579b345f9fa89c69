package dashboard

import "io/fs"

// Files returns the embedded files as served under AssetPrefix.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}
