//go:build !purego

package main

// buildTags are the tags the test binary was built with; TestMain builds glle-bench with them.
const buildTags = ""
