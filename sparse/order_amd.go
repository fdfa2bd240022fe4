package sparse

import (
	"context"
	"math"
)

// adjLists are the variable and element lists of one variable.
type adjLists struct{ va, ea []int32 }

// vstate is a vertex's supervariable weight (0 once merged, mass-eliminated or eliminated)
// and its mark, kept together so that the hot membership test costs one cache line.
type vstate struct {
	nv    int32
	stamp int32
}

// pivotRule is the score by which the quotient-graph elimination picks its next pivot: the
// variable of least score.
type pivotRule int

const (
	// ruleDegree: the approximate external degree d_i (AMD).
	ruleDegree pivotRule = iota
	// ruleMeanFill: approximate minimum mean local fill (AMMF; Rothberg and Eisenstat, "Node
	// selection strategies for bottom-up sparse matrix ordering", SIAM J. Matrix Anal. Appl.
	// 19(3), 1998): eliminating supervariable i joins its d_i external neighbours into one
	// clique; the c_i of them in i's largest element (max |L_e \ i| over the elements e
	// adjacent to i) are a clique already, so about d_i (d_i - 1) / 2 - c_i (c_i - 1) / 2 new
	// entries appear, which the score divides by i's weight (the columns eliminated with it).
	// A variable's score is updated when an element forms beside it, as AMD's degree is;
	// before the first, c_i = 0. For the older elements |L_e \ i| is taken with i's weight
	// before the variables found indistinguishable from i in this step join it.
	// Measured on the LU of B = I - W (GFlop; random 2-D kNN graph at n = 200k, Swiss roll
	// at n = 200k and 1M): AMD 4.29, 2.92, 40.2; the element just formed as c_i's only
	// clique 3.72, 2.42, 29.6; the largest element with i's weight after the merge 3.62, 2.23,
	// 29.4; this rule 3.36, 2.20, 29.2.
	ruleMeanFill
)

// amdOrder returns an approximate minimum degree ordering of g: perm[k] is the vertex
// eliminated k-th. It implements the quotient-graph elimination of Amestoy, Davis and Duff,
// "An approximate minimum degree ordering algorithm", SIAM J. Matrix Anal. Appl. 17(4), 1996:
// eliminated vertices become elements (cliques), the approximate external degree bound
// d_i = |A_i| + |L_p \ i| + sum_{e in E_i} |L_e \ L_p| replaces the exact degree, elements
// covered by the new element are absorbed (aggressive absorption), variables adjacent only to
// the new element are eliminated with it (mass elimination), and indistinguishable variables
// are merged into supervariables found by hashing their adjacency.
//
// The variable lists are views of g.adj, which AMD uses as its workspace: g's adjacency is
// overwritten (g must not be used afterwards). The element lists are per-vertex Go slices.
// ctx is checked every 4096 pivots; its error is returned when it is done.
func amdOrder(ctx context.Context, g *graph) ([]int32, error) {
	return amdOrderCounts(ctx, g, make([]int32, 0, g.n), nil, nil, ruleDegree)
}

// publishEvery is how many newly eliminated vertices amdOrderCounts lets pass between two
// publications of its progress.
const publishEvery = 512

// amdOrderCounts is amdOrder appending to perm, which must have capacity n, so that the
// vertices eliminated so far can be read concurrently: whenever publishEvery more vertices
// are in perm it publishes len(perm) to pub (nil: none), after those entries are written;
// they never change afterwards. When cc is not nil (length n) it also sets cc[k] to the
// number of nonzeros (diagonal included) of column k of the Cholesky factor in the
// ordering's numbering, or cc[0] to -1 when it ordered dense vertices last (their entries
// are not in those counts). rule picks the pivots: ruleDegree is AMD, ruleMeanFill the same
// elimination choosing by approximate mean fill (OrderingAMF).
func amdOrderCounts(ctx context.Context, g *graph, perm []int32, pub *amdProgress, cc []int32, rule pivotRule) ([]int32, error) {
	n := g.n
	if cap(perm) < n {
		panic("sparse: amdOrderCounts: perm capacity below n")
	}
	perm = perm[:0]
	if n == 0 {
		return perm, nil
	}
	var (
		vs   = make([]vstate, n) // weight and mark of every vertex, side by side
		dead = make([]bool, n)   // element absorbed into a later element
		// A_i (variable neighbours) and E_i (element neighbours) of variable i, side by side
		// so that one cache line holds both slice headers.
		lists  = make([]adjLists, n)
		elVars = make([][]int32, n) // L_e: variables of element e (may hold stale entries)
		elW    = make([]int, n)     // weight of the live variables of element e
		key    = make([]int32, n)   // score bucket of variable i (scoreKey)
		clq    = make([]int32, n)   // scratch: largest |L_e \ i| over i's elements other than p
		ext    = make([]int, n)     // scratch: degree contributions outside L_p
		hash   = make([]uint32, n)  // scratch: adjacency hash
		wst    = make([]int, n)     // marks for w(e)
		wv     = make([]int, n)     // w(e) = |L_e \ L_p|
		// score buckets: doubly linked lists
		head = make([]int32, 2*n+2)
		next = make([]int32, n)
		prev = make([]int32, n)
		// member lists of supervariables and eliminated groups
		memNext = make([]int32, n)
		memLast = make([]int32, n)
		// hash buckets (heads indexed by hash mod n)
		hhead = make([]int32, n)
		hnext = make([]int32, n)
	)
	tag, wtag := int32(0), 0
	// nextTag advances the mark; on int32 overflow all marks are reset.
	nextTag := func() {
		if tag == math.MaxInt32 {
			for i := range vs {
				vs[i].stamp = 0
			}
			tag = 0
		}
		tag++
	}
	for i := range head {
		head[i] = -1
	}
	for i := range hhead {
		hhead[i] = -1
	}
	// scoreKey maps a score to its bucket: scores up to n have their own bucket (every degree
	// does), larger ones (fill scores) share buckets n/8 wide, up to bucket 2n+1. Within a
	// bucket the last inserted variable is taken first.
	stride := max(n/8, 1)
	scoreKey := func(sc int) int32 {
		if sc > n {
			sc = min(n+(sc-n)/stride, 2*n+1)
		}
		return int32(sc)
	}
	// score is variable i's score for external degree d when c of its neighbours (weights)
	// form a clique with it.
	score := func(i int32, d, c int) int32 {
		if rule == ruleDegree {
			return int32(d)
		}
		c = min(c, d)
		return scoreKey((d*(d-1) - c*(c-1)) / 2 / int(vs[i].nv))
	}
	insert := func(i int32, k int32) {
		key[i] = k
		next[i] = head[k]
		prev[i] = -1
		if head[k] >= 0 {
			prev[head[k]] = i
		}
		head[k] = i
	}
	remove := func(i int32) {
		k := key[i]
		if prev[i] >= 0 {
			next[prev[i]] = next[i]
		} else {
			head[k] = next[i]
		}
		if next[i] >= 0 {
			prev[next[i]] = prev[i]
		}
	}
	// appendMembers links the member list of j after that of i.
	appendMembers := func(i, j int32) {
		memNext[memLast[i]] = j
		memLast[i] = memLast[j]
	}
	// The variable lists are views of the graph's adjacency array (they only shrink), so that
	// lists of nearby vertices are nearby in memory.
	flat := g.adj
	// Element lists start with room for elCap entries each in one array (longer ones move to
	// the heap when they grow).
	const elCap = 8
	elFlat := make([]int32, n*elCap)
	// Dense vertices (degree above denseDegree) are left out of the elimination and ordered
	// last, as in Amestoy, Davis and Duff's AMD: a hub adjacent to most vertices would make
	// every pivot next to it scan its whole list (quadratic time), and eliminated early it
	// would join all its neighbours into one clique.
	thr := denseDegree(n)
	var dense []int32
	for i := 0; i < n; i++ {
		if g.xadj[i+1]-g.xadj[i] > thr {
			dense = append(dense, int32(i))
			vs[i].stamp = -1 // marks a dense vertex until the lists are pruned
		}
	}
	for i := 0; i < n; i++ {
		vs[i].nv = 1
		lo, hi := g.xadj[i], g.xadj[i+1]
		a := flat[lo:hi:hi]
		if len(dense) > 0 {
			if vs[i].stamp < 0 {
				continue
			}
			a = a[:0]
			for _, v := range flat[lo:hi] {
				if vs[v].stamp >= 0 {
					a = append(a, v)
				}
			}
		}
		lists[i].va = a
		lists[i].ea = elFlat[i*elCap : i*elCap : (i+1)*elCap]
		memNext[i] = -1
		memLast[i] = int32(i)
		insert(int32(i), score(int32(i), len(a), 0))
	}
	for _, v := range dense {
		vs[v] = vstate{} // never a live variable: the elimination skips it
	}
	nOrd := n - len(dense) // the vertices the elimination orders (n still sizes the buckets)
	mindeg := int32(0)     // no bucket below it is occupied
	nel := 0
	published := 0 // length of perm last published
	work := 0      // list entries scanned since the last look at ctx
	var lp []int32
	for step := 0; nel < nOrd; step++ {
		if step&4095 == 4095 || work > amdCtxWork {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for head[mindeg] < 0 {
			mindeg++
		}
		p := head[mindeg]
		remove(p)
		nel += int(vs[p].nv)
		vs[p].nv = 0 // an element from now on: every live-variable test below skips it

		// L_p = (A_p ∪ (∪_{e ∈ E_p} L_e)) \ {p}; the elements of E_p are absorbed into p.
		nextTag()
		vs[p].stamp = tag
		lp = lp[:0]
		wp := 0
		for _, v := range lists[p].va {
			if st := &vs[v]; st.nv > 0 && st.stamp != tag {
				st.stamp = tag
				lp = append(lp, v)
				wp += int(st.nv)
			}
		}
		for _, e := range lists[p].ea {
			if dead[e] {
				continue
			}
			for _, v := range elVars[e] {
				if st := &vs[v]; st.nv > 0 && st.stamp != tag {
					st.stamp = tag
					lp = append(lp, v)
					wp += int(st.nv)
				}
			}
			dead[e] = true
			elVars[e] = nil
		}
		lists[p].va = nil
		lists[p].ea = nil
		for _, i := range lp {
			remove(i)
		}

		// Prune the adjacency of each i in L_p; mass-eliminate variables adjacent to p only.
		k := 0
		for _, i := range lp {
			work += len(lists[i].va) + len(lists[i].ea)
			es := lists[i].ea[:0]
			for _, e := range lists[i].ea {
				if !dead[e] {
					es = append(es, e)
				}
			}
			lists[i].ea = append(es, p)
			va := lists[i].va[:0]
			for _, v := range lists[i].va {
				if st := &vs[v]; st.nv > 0 && st.stamp != tag {
					va = append(va, v)
				}
			}
			lists[i].va = va
			if len(va) == 0 && len(lists[i].ea) == 1 {
				appendMembers(p, i)
				nel += int(vs[i].nv)
				wp -= int(vs[i].nv)
				vs[i].nv = 0
				lists[i].va = nil
				lists[i].ea = nil
				continue
			}
			lp[k] = i
			k++
		}
		lp = lp[:k]

		// w(e) = |L_e \ L_p| for every element adjacent to L_p.
		wtag++
		for _, i := range lp {
			for _, e := range lists[i].ea {
				if e == p {
					continue
				}
				if wst[e] != wtag {
					wst[e] = wtag
					wv[e] = elW[e]
				}
				wv[e] -= int(vs[i].nv)
			}
		}

		// Degree contributions outside L_p, aggressive absorption, hashes.
		for _, i := range lp {
			d, c := 0, 0
			h := uint32(0)
			es := lists[i].ea[:0]
			for _, e := range lists[i].ea {
				if e == p {
					es = append(es, e)
					continue
				}
				if dead[e] {
					continue
				}
				if wv[e] == 0 {
					// L_e ⊆ L_p: e is absorbed into p.
					dead[e] = true
					elVars[e] = nil
					continue
				}
				d += wv[e]
				c = max(c, elW[e]-int(vs[i].nv))
				h += uint32(e)
				es = append(es, e)
			}
			lists[i].ea = es
			for _, v := range lists[i].va {
				d += int(vs[v].nv)
				h += uint32(v)
			}
			ext[i] = d
			clq[i] = int32(c)
			hash[i] = h
		}

		// Supervariable detection: variables of L_p with equal hashes are compared.
		for _, i := range lp {
			b := int32(hash[i] % uint32(n))
			hnext[i] = hhead[b]
			hhead[b] = i
		}
		for _, i0 := range lp {
			b := int32(hash[i0] % uint32(n))
			if hhead[b] < 0 {
				continue
			}
			for i := hhead[b]; i >= 0; i = hnext[i] {
				if vs[i].nv == 0 {
					continue
				}
				nextTag()
				for _, v := range lists[i].va {
					vs[v].stamp = tag
				}
				for _, e := range lists[i].ea {
					vs[e].stamp = tag
				}
				for j := hnext[i]; j >= 0; j = hnext[j] {
					if vs[j].nv == 0 || hash[j] != hash[i] || len(lists[j].va) != len(lists[i].va) || len(lists[j].ea) != len(lists[i].ea) {
						continue
					}
					same := true
					for _, v := range lists[j].va {
						if vs[v].stamp != tag {
							same = false
							break
						}
					}
					if same {
						for _, e := range lists[j].ea {
							if vs[e].stamp != tag {
								same = false
								break
							}
						}
					}
					if same {
						vs[i].nv += vs[j].nv
						vs[j].nv = 0
						lists[j].va = nil
						lists[j].ea = nil
						appendMembers(i, j)
					}
				}
			}
			hhead[b] = -1
		}

		// Final approximate degrees; the new element p holds the surviving variables.
		nleft := nOrd - nel
		k = 0
		for _, i := range lp {
			if vs[i].nv == 0 {
				continue
			}
			d := ext[i] + wp - int(vs[i].nv)
			if b := nleft - int(vs[i].nv); d > b {
				d = b
			}
			insert(i, score(i, d, max(wp-int(vs[i].nv), int(clq[i]))))
			mindeg = min(mindeg, key[i])
			lp[k] = i
			k++
		}
		elVars[p] = append([]int32(nil), lp[:k]...)
		elW[p] = wp
		start := len(perm)
		for v := p; v >= 0; v = memNext[v] {
			perm = append(perm, v)
		}
		if cc != nil {
			for j, T := 0, len(perm)-start; j < T; j++ {
				cc[start+j] = int32(T - j + wp)
			}
		}
		if pub != nil && len(perm)-published >= publishEvery {
			pub.publish(len(perm))
			published = len(perm)
		}
	}
	if len(dense) > 0 {
		perm = append(perm, dense...)
		if cc != nil {
			// The counts above ignore the dense vertices' entries: let the analysis count.
			cc[0] = -1
		}
	}
	return perm, nil
}

// amdCtxWork is how many adjacency entries AMD scans between two looks at its context
// (about 10-50 ms), besides every 4096 pivots.
const amdCtxWork = 1 << 24

// denseDegree is the degree above which AMD orders a vertex last without eliminating it:
// max(16, 10 sqrt(n)), the default of Amestoy, Davis and Duff's AMD.
func denseDegree(n int) int {
	return int(max(16, 10*math.Sqrt(float64(n))))
}
