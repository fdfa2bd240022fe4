// Package latency bounds, in tests, how long a cancelled operation may take to return, as a fraction of the same job's uncancelled run.
package latency
