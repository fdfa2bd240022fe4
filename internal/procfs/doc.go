// Package procfs reads sizes from the text files of Linux's /proc (meminfo, <pid>/status).
package procfs
