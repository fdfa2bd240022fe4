package knn

import "math"

// topK keeps the k smallest (dist, index) pairs seen so far in a fixed-size max-heap ordered
// by distance, then index. It never allocates after newTopK.
type topK struct {
	dist []float64
	idx  []int32
}

func newTopK(k int) topK {
	return topK{dist: make([]float64, k), idx: make([]int32, k)}
}

// reset fills the heap with sentinels (+Inf, MaxInt32) that every real candidate beats.
func (h *topK) reset() {
	for i := range h.dist {
		h.dist[i] = math.Inf(1)
		h.idx[i] = math.MaxInt32
	}
}

// before reports whether (d1, i1) ranks before (d2, i2).
func before(d1 float64, i1 int32, d2 float64, i2 int32) bool {
	return d1 < d2 || (d1 == d2 && i1 < i2)
}

// push offers a candidate; it replaces the current worst if it ranks before it.
func (h *topK) push(d float64, i int32) {
	if before(d, i, h.dist[0], h.idx[0]) {
		h.replaceTop(d, i)
	}
}

// replaceTop replaces the root (the worst kept pair) and restores the heap.
func (h *topK) replaceTop(d float64, i int32) {
	h.siftDown(d, i, len(h.dist))
}

func (h *topK) siftDown(d float64, i int32, n int) {
	dist, idx := h.dist[:n], h.idx[:n]
	p := 0
	for {
		c := 2*p + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(dist[c], idx[c], dist[r], idx[r]) {
			c = r
		}
		if !before(d, i, dist[c], idx[c]) {
			break
		}
		dist[p], idx[p] = dist[c], idx[c]
		p = c
	}
	dist[p], idx[p] = d, i
}

// sortTo writes the kept pairs in ascending order to outIdx and outDist; it destroys the heap.
func (h *topK) sortTo(outIdx []int32, outDist []float64) {
	n := len(h.dist)
	for end := n - 1; end > 0; end-- {
		d, i := h.dist[end], h.idx[end]
		h.dist[end], h.idx[end] = h.dist[0], h.idx[0]
		h.siftDown(d, i, end)
	}
	copy(outIdx, h.idx)
	copy(outDist, h.dist)
}

// maxHeapF is a fixed-size max-heap of float64 values (root at index 0).
func siftDownF(h []float64, v float64) {
	n := len(h)
	p := 0
	for {
		c := 2*p + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r] > h[c] {
			c = r
		}
		if !(h[c] > v) {
			break
		}
		h[p] = h[c]
		p = c
	}
	h[p] = v
}
