package sparse

import (
	"errors"
	"fmt"
	"math"
)

// Ordering selects the fill-reducing permutation computed by Analyze.
type Ordering int

const (
	// OrderingDefault picks the best available ordering, OrderingAMF. On M = (I-W)^T (I-W)
	// of kNN graphs (k = 10) of 2-D point clouds OrderingAMD beat both nested dissections of
	// this package at n = 100k (nnz(L) 158/row, 6.7 GFlop vs 236/row, 12.6 GFlop for
	// OrderingND) and at n = 1M (251/row, 349 GFlop vs 332/row, 442 GFlop;
	// OrderingGeometricND 312/row, 378 GFlop); OrderingAMF needs fewer flops than AMD on
	// those graphs (the LU of B = I - W on the Swiss roll at n = 1M: 29.2 against 40.2 GFlop).
	// Coords are ignored unless OrderingGeometricND is asked for.
	OrderingDefault Ordering = iota
	// OrderingNatural keeps the input order (no permutation); meant for tests and banded inputs.
	OrderingNatural
	// OrderingAMD is an approximate minimum degree ordering (Amestoy, Davis and Duff 1996).
	OrderingAMD
	// OrderingND is a graph nested dissection: recursive bisection by breadth-first level
	// structures from pseudo-peripheral vertices, with AMD on the leaves.
	OrderingND
	// OrderingGeometricND is nested dissection by recursive coordinate bisection of
	// SymbolicOptions.Coords (vertex separators taken from the graph), with AMD on the leaves.
	OrderingGeometricND
	// OrderingAMF is AMD's quotient-graph elimination choosing each pivot by approximate
	// minimum mean local fill instead of degree (Rothberg and Eisenstat 1998): the fill the
	// elimination would create, estimated from the degree and the element just formed,
	// divided by the number of columns eliminated together.
	OrderingAMF
)

// String names the ordering.
func (o Ordering) String() string {
	switch o {
	case OrderingDefault:
		return "default"
	case OrderingNatural:
		return "natural"
	case OrderingAMD:
		return "amd"
	case OrderingND:
		return "nd"
	case OrderingGeometricND:
		return "geond"
	case OrderingAMF:
		return "amf"
	}
	return fmt.Sprintf("Ordering(%d)", int(o))
}

// graph is a symmetric adjacency structure without self loops or duplicate edges:
// the neighbours of v are adj[xadj[v]:xadj[v+1]].
type graph struct {
	n    int
	xadj []int
	adj  []int32
}

// errPattern reports an invalid CSR pattern.
var errPattern = errors.New("sparse: invalid CSR pattern")

// checkPattern validates a CSR pattern of an n x n matrix.
func checkPattern[I int | int32](n int, rowPtr []int, colIdx []I) error {
	if n < 0 {
		return fmt.Errorf("%w: negative order %d", errPattern, n)
	}
	if n > math.MaxInt32-1 {
		return fmt.Errorf("%w: order %d exceeds the int32 index range", errPattern, n)
	}
	if len(rowPtr) != n+1 {
		return fmt.Errorf("%w: len(rowPtr) = %d, want n+1 = %d", errPattern, len(rowPtr), n+1)
	}
	if rowPtr[0] != 0 {
		return fmt.Errorf("%w: rowPtr[0] = %d, want 0", errPattern, rowPtr[0])
	}
	for i := 0; i < n; i++ {
		if rowPtr[i+1] < rowPtr[i] {
			return fmt.Errorf("%w: rowPtr decreases at row %d", errPattern, i)
		}
	}
	if rowPtr[n] > len(colIdx) {
		return fmt.Errorf("%w: rowPtr[n] = %d exceeds len(colIdx) = %d", errPattern, rowPtr[n], len(colIdx))
	}
	if rowPtr[n] > math.MaxInt32 {
		return fmt.Errorf("%w: %d stored entries exceed the int32 index range", errPattern, rowPtr[n])
	}
	for p, c := range colIdx[:rowPtr[n]] {
		if c < 0 || int(c) >= n {
			return fmt.Errorf("%w: column index %d at position %d out of range [0, %d)", errPattern, c, p, n)
		}
	}
	return nil
}

// buildGraph forms the adjacency graph of the symmetric matrix whose lower triangle is the
// entries (i, j), j < i, of the CSR pattern; entries above the diagonal and the diagonal are
// ignored. The pattern must have been validated by checkPattern.
func buildGraph[I int | int32](n int, rowPtr []int, colIdx []I) *graph {
	g, _, _ := buildGraphCount(n, rowPtr, colIdx)
	return g
}

// buildGraphCount is buildGraph that also returns the numbers of stored entries below and
// above the diagonal (duplicates counted).
func buildGraphCount[I int | int32](n int, rowPtr []int, colIdx []I) (g *graph, lower, upper int) {
	deg := make([]int, n+1)
	for i := 0; i < n; i++ {
		for _, j := range colIdx[rowPtr[i]:rowPtr[i+1]] {
			if int(j) < i {
				deg[i]++
				deg[j]++
				lower++
			} else if int(j) > i {
				upper++
			}
		}
	}
	xadj := make([]int, n+1)
	for i := 0; i < n; i++ {
		xadj[i+1] = xadj[i] + deg[i]
	}
	adj := make([]int32, xadj[n])
	fill := deg[:n]
	copy(fill, xadj[:n])
	for i := 0; i < n; i++ {
		for _, j := range colIdx[rowPtr[i]:rowPtr[i+1]] {
			if int(j) < i {
				adj[fill[i]] = int32(j)
				fill[i]++
				adj[fill[j]] = int32(i)
				fill[j]++
			}
		}
	}
	// Remove duplicate edges in place.
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	out := 0
	start := 0
	for i := 0; i < n; i++ {
		end := xadj[i+1]
		xadj[i] = out
		for _, v := range adj[start:end] {
			if mark[v] != int32(i) {
				mark[v] = int32(i)
				adj[out] = v
				out++
			}
		}
		start = end
	}
	xadj[n] = out
	return &graph{n: n, xadj: xadj, adj: adj[:out:out]}, lower, upper
}

// subgraph extracts the graph induced by the vertices vs; loc must have length g.n, hold -1
// for every vertex not in vs, and is left that way on return. Vertex k of the result is vs[k].
func (g *graph) subgraph(vs []int32, loc []int32) *graph {
	for k, v := range vs {
		loc[v] = int32(k)
	}
	m := 0
	for _, v := range vs {
		for _, u := range g.adj[g.xadj[v]:g.xadj[v+1]] {
			if loc[u] >= 0 {
				m++
			}
		}
	}
	sg := &graph{n: len(vs), xadj: make([]int, len(vs)+1), adj: make([]int32, 0, m)}
	for k, v := range vs {
		for _, u := range g.adj[g.xadj[v]:g.xadj[v+1]] {
			if l := loc[u]; l >= 0 {
				sg.adj = append(sg.adj, l)
			}
		}
		sg.xadj[k+1] = len(sg.adj)
	}
	for _, v := range vs {
		loc[v] = -1
	}
	return sg
}
