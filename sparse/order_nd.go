package sparse

import (
	"context"
	"sort"
)

// ndLeaf is the region size below which nested dissection orders a region with AMD.
// Larger leaves lower nnz(L) a little on kNN graphs (n = 100k: 236/row at 200, 200/row at
// 10000) but hardly change the flops, which the top separators dominate.
const ndLeaf = 200

// ndRegion is a pending region of a nested dissection: its vertices occupy positions
// [lo, lo+len(vs)) of the output permutation.
type ndRegion struct {
	vs []int32
	lo int
}

// ndOrder returns a nested dissection ordering of g (George 1973; separators by level
// structures as in George and Liu, "Computer Solution of Large Sparse Positive Definite
// Systems", 1981, ch. 8): each connected region is split by a level of the breadth-first
// level structure rooted at a pseudo-peripheral vertex, the level with the fewest vertices
// among those splitting the region into parts of 35%..65% of its size, thinned to the
// vertices adjacent to the next level. Both parts are ordered first, the separator last.
// Regions of at most ndLeaf vertices are ordered by AMD. If coords is not nil (row-major,
// dim values per vertex) regions are instead split at the median of the coordinate of
// largest spread, the separator being the vertices of the lower half adjacent to the upper.
func ndOrder(ctx context.Context, g *graph, coords []float64, dim int) ([]int32, error) {
	n := g.n
	perm := make([]int32, n)
	loc := make([]int32, n)   // scratch for subgraph extraction, -1 outside
	level := make([]int32, n) // BFS level within the current region, -1 unvisited
	inReg := make([]int32, n) // region id of each vertex
	for i := range loc {
		loc[i] = -1
		level[i] = -1
	}
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	regID := int32(0)
	stack := []ndRegion{{vs: all, lo: 0}}
	var queue []int32
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(r.vs) <= ndLeaf {
			ndLeafOrder(g, r, loc, perm)
			continue
		}
		regID++
		for _, v := range r.vs {
			inReg[v] = regID
		}
		// Split off connected components.
		queue = ndBFS(g, r.vs[0], inReg, regID, level, queue[:0])
		if len(queue) < len(r.vs) {
			// Disconnected: order the components one after another (all found in one pass).
			comps := append(make([]int32, 0, len(r.vs)), queue...)
			bounds := []int{0, len(comps)}
			for _, v := range r.vs {
				if level[v] < 0 {
					comps = ndBFS(g, v, inReg, regID, level, comps)
					bounds = append(bounds, len(comps))
				}
			}
			for _, v := range comps {
				level[v] = -1
			}
			for c := 0; c+1 < len(bounds); c++ {
				stack = append(stack, ndRegion{vs: comps[bounds[c]:bounds[c+1]], lo: r.lo + bounds[c]})
			}
			continue
		}
		var a, b, s []int32
		if coords != nil {
			for _, v := range queue {
				level[v] = -1
			}
			a, b, s = ndCoordSplit(g, r.vs, coords, dim, inReg, regID, level)
		} else {
			// Pseudo-peripheral root: restart from a minimum-degree vertex of the last level
			// while the eccentricity grows (Gibbs, Poole and Stockmeyer 1976).
			ecc := level[queue[len(queue)-1]]
			for it := 0; it < 4; it++ {
				cand, best := int32(-1), -1
				for q := len(queue) - 1; q >= 0 && level[queue[q]] == ecc; q-- {
					v := queue[q]
					if d := g.xadj[v+1] - g.xadj[v]; best < 0 || d < best {
						best, cand = d, v
					}
				}
				for _, v := range queue {
					level[v] = -1
				}
				queue = ndBFS(g, cand, inReg, regID, level, queue[:0])
				e := level[queue[len(queue)-1]]
				if e <= ecc {
					break
				}
				ecc = e
			}
			a, b, s = ndLevelSplit(g, queue, level, inReg, regID)
			for _, v := range queue {
				level[v] = -1
			}
		}
		if len(a) == 0 || len(b) == 0 {
			ndLeafOrder(g, r, loc, perm)
			continue
		}
		for k, v := range s {
			perm[r.lo+len(a)+len(b)+k] = v
		}
		stack = append(stack, ndRegion{vs: b, lo: r.lo + len(a)}, ndRegion{vs: a, lo: r.lo})
	}
	return perm, nil
}

// ndBFS appends to queue the vertices of region regID reachable from root in breadth-first
// order, setting level[v] to their distance from root.
func ndBFS(g *graph, root int32, inReg []int32, regID int32, level []int32, queue []int32) []int32 {
	level[root] = 0
	queue = append(queue, root)
	for h := 0; h < len(queue); h++ {
		v := queue[h]
		lv := level[v] + 1
		for _, u := range g.adj[g.xadj[v]:g.xadj[v+1]] {
			if inReg[u] == regID && level[u] < 0 {
				level[u] = lv
				queue = append(queue, u)
			}
		}
	}
	return queue
}

// ndLevelSplit chooses a separating level of the level structure in queue (BFS order) and
// returns the two parts and the separator.
func ndLevelSplit(g *graph, queue []int32, level []int32, inReg []int32, regID int32) (a, b, s []int32) {
	nl := int(level[queue[len(queue)-1]]) + 1
	if nl < 3 {
		return nil, nil, nil
	}
	cnt := make([]int, nl+1)
	for _, v := range queue {
		cnt[level[v]+1]++
	}
	for l := 1; l <= nl; l++ {
		cnt[l] += cnt[l-1]
	}
	// cnt[l] = number of vertices in levels < l.
	nr := len(queue)
	best := -1
	for l := 1; l < nl-1; l++ {
		below := cnt[l]
		above := nr - cnt[l+1]
		if 100*below < 35*nr || 100*above < 35*nr { // balance window 35%..65%
			continue
		}
		if best < 0 || cnt[l+1]-cnt[l] < cnt[best+1]-cnt[best] {
			best = l
		}
	}
	if best < 0 {
		// No level inside the window: take the median level.
		for l := 1; l < nl-1; l++ {
			if 2*cnt[l+1] >= nr {
				best = l
				break
			}
		}
		if best < 0 {
			return nil, nil, nil
		}
	}
	sep := int32(best)
	for _, v := range queue {
		switch lv := level[v]; {
		case lv < sep:
			a = append(a, v)
		case lv > sep:
			b = append(b, v)
		default:
			touches := false
			for _, u := range g.adj[g.xadj[v]:g.xadj[v+1]] {
				if inReg[u] == regID && level[u] == sep+1 {
					touches = true
					break
				}
			}
			if touches {
				s = append(s, v)
			} else {
				a = append(a, v)
			}
		}
	}
	return a, b, s
}

// ndCoordSplit bisects a connected region at the median of its coordinate of largest
// spread; the separator is the set of lower-half vertices with a neighbour in the upper half.
// mark is scratch of length g.n holding -1, restored on return.
func ndCoordSplit(g *graph, vs []int32, coords []float64, dim int, inReg []int32, regID int32, mark []int32) (a, b, s []int32) {
	axis, spread := 0, -1.0
	for d := 0; d < dim; d++ {
		lo, hi := coords[int(vs[0])*dim+d], coords[int(vs[0])*dim+d]
		for _, v := range vs {
			x := coords[int(v)*dim+d]
			lo = min(lo, x)
			hi = max(hi, x)
		}
		if hi-lo > spread {
			axis, spread = d, hi-lo
		}
	}
	ord := append([]int32(nil), vs...)
	sort.Slice(ord, func(i, j int) bool {
		ci, cj := coords[int(ord[i])*dim+axis], coords[int(ord[j])*dim+axis]
		if ci != cj {
			return ci < cj
		}
		return ord[i] < ord[j]
	})
	half := len(ord) / 2
	for _, v := range ord[half:] {
		mark[v] = 1
	}
	for _, v := range ord[:half] {
		touches := false
		for _, u := range g.adj[g.xadj[v]:g.xadj[v+1]] {
			if inReg[u] == regID && mark[u] == 1 {
				touches = true
				break
			}
		}
		if touches {
			s = append(s, v)
		} else {
			a = append(a, v)
		}
	}
	for _, v := range ord[half:] {
		mark[v] = -1
	}
	b = ord[half:]
	return a, b, s
}

// ndLeafOrder orders a region with AMD on its induced subgraph.
func ndLeafOrder(g *graph, r ndRegion, loc []int32, perm []int32) {
	sg := g.subgraph(r.vs, loc)
	p, _ := amdOrder(context.Background(), sg) // sg is ours: AMD may use it as workspace
	for k, v := range p {
		perm[r.lo+k] = r.vs[v]
	}
}
