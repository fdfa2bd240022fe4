// Command glle-bench runs LLE and generative LLE from the command line: datasets, fits, generations, models, transforms, figures and benchmark sweeps.
package main
