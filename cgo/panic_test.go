//go:build cgo && !purego

package cgo

import "fmt"

// panicMessage runs f and returns what it panicked with, formatted with %v ("" when it did not
// panic): the kernels' shape checks panic with constant messages, which the tests compare.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
