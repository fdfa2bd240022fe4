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
	if len(h.dist) > sortedMax {
		h.siftDown(d, i, len(h.dist))
		return
	}
	// Small k: a descending sorted array (worst first) is a valid max-heap and cheaper to
	// maintain by insertion.
	dist, idx := h.dist, h.idx
	j := 0
	for ; j+1 < len(dist) && before(d, i, dist[j+1], idx[j+1]); j++ {
		dist[j], idx[j] = dist[j+1], idx[j+1]
	}
	dist[j], idx[j] = d, i
}

// sortedMax is the largest k kept as a sorted array rather than a binary heap.
const sortedMax = 24

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
	if n <= sortedMax {
		for p := 0; p < n; p++ {
			outIdx[p], outDist[p] = h.idx[n-1-p], h.dist[n-1-p]
		}
		return
	}
	for end := n - 1; end > 0; end-- {
		d, i := h.dist[end], h.idx[end]
		h.dist[end], h.idx[end] = h.dist[0], h.idx[0]
		h.siftDown(d, i, end)
	}
	copy(outIdx, h.idx)
	copy(outDist, h.dist)
}

// siftDownF replaces the root of the float64 max-heap h (root at index 0) with v and restores
// the heap.
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
