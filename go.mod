module glle

go 1.26.0

require (
	golang.org/x/sync v0.25.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20230729102104-8b8060e7531f
)

require github.com/james-bowman/sparse v0.0.0-20260216202247-495ee4f84d35 // indirect
