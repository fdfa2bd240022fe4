package sparse

// adjacency holds the neighbour lists of a symmetric pattern in its own numbering: those of v
// are idx[ptr[v]:ptr[v+1]]. A list may contain v itself (a CSR row with its diagonal); the
// symbolic routines skip it.
type adjacency[I int | int32] struct {
	ptr []int
	idx []I
}

// etree computes the elimination tree of P A P^T, where A has the adjacency a and
// perm[k] = old index of new index k (iperm its inverse): parent[k] is the parent of column k,
// -1 for a root. Liu's algorithm with path compression ("A compact row storage scheme for
// Cholesky factors using elimination trees", ACM TOMS 12(2), 1986). ancestor is scratch of
// length n.
func etree[I int | int32](a adjacency[I], perm, iperm []int32, parent, ancestor []int32) {
	etreeCols(a, perm, iperm, parent, ancestor, 0, len(perm))
}

// etreeCols runs Liu's algorithm on the columns k0 <= k < k1 of P A P^T, after the columns
// before k0: it visits the columns in order and reads only perm[:k1], so it can follow an
// ordering still being computed (etreeFollower). It sets iperm[perm[k]] = k on the way; the
// entries of vertices not yet visited must be -1 or at least their own new index (the
// complete inverse permutation qualifies).
func etreeCols[I int | int32](a adjacency[I], perm, iperm []int32, parent, ancestor []int32, k0, k1 int) {
	for k := k0; k < k1; k++ {
		parent[k] = -1
		ancestor[k] = -1
		old := perm[k]
		iperm[old] = int32(k)
		for _, u := range a.idx[a.ptr[old]:a.ptr[old+1]] {
			i := iperm[u]
			for i >= 0 && i < int32(k) {
				nxt := ancestor[i]
				ancestor[i] = int32(k)
				if nxt < 0 {
					parent[i] = int32(k)
				}
				i = nxt
			}
		}
	}
}

// postorder returns a depth-first postorder of the forest given by parent: post[k] is the
// k-th node visited. Children are visited in increasing order of their index.
func postorder(parent []int32) []int32 {
	n := len(parent)
	head := make([]int32, n)
	next := make([]int32, n)
	for i := range head {
		head[i] = -1
	}
	for j := n - 1; j >= 0; j-- {
		if p := parent[j]; p >= 0 {
			next[j] = head[p]
			head[p] = int32(j)
		}
	}
	post := make([]int32, 0, n)
	stack := make([]int32, 0, 64)
	for r := 0; r < n; r++ {
		if parent[r] >= 0 {
			continue
		}
		stack = append(stack, int32(r))
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if c := head[top]; c >= 0 {
				head[top] = next[c]
				stack = append(stack, c)
			} else {
				stack = stack[:len(stack)-1]
				post = append(post, top)
			}
		}
	}
	return post
}

// colCounts returns the number of nonzeros (diagonal included) in each column of the Cholesky
// factor of P A P^T, whose elimination tree parent must be postordered (every node numbered
// after its descendants, each subtree contiguous). It is the row-subtree skeleton algorithm of
// Gilbert, Ng and Peyton, "An efficient algorithm to compute row and column counts for sparse
// Cholesky factorization", SIAM J. Matrix Anal. Appl. 15(4), 1994: column j's count is the
// number of row subtrees containing j, accumulated from +1 at each row subtree leaf and -1
// at the least common ancestor of consecutive leaves, found with a disjoint-set forest.
func colCounts[I int | int32](a adjacency[I], perm, iperm []int32, parent []int32) []int32 {
	n := len(parent)
	delta := make([]int32, n)
	first := make([]int32, n)    // first descendant (smallest index in the subtree)
	maxfirst := make([]int32, n) // largest first[j] of a leaf seen so far in row subtree i
	prevleaf := make([]int32, n) // previous leaf of row subtree i
	ancestor := make([]int32, n) // disjoint-set forest
	for j := 0; j < n; j++ {
		first[j] = -1
		maxfirst[j] = -1
		prevleaf[j] = -1
		ancestor[j] = int32(j)
	}
	for j := 0; j < n; j++ {
		// In a postorder the first descendant of j is the first descendant of its first child.
		if first[j] < 0 {
			first[j] = int32(j)
			delta[j] = 1 // j is a leaf of the elimination tree
		}
		for p := parent[j]; p >= 0 && first[p] < 0; p = parent[p] {
			first[p] = first[j]
		}
	}
	for j := 0; j < n; j++ {
		if parent[j] >= 0 {
			delta[parent[j]]--
		}
		old := perm[j]
		for _, u := range a.idx[a.ptr[old]:a.ptr[old+1]] {
			i := iperm[u]
			if i <= int32(j) || first[j] <= maxfirst[i] { // also skips u = old (i = j)
				continue // j is not a leaf of row subtree i
			}
			maxfirst[i] = first[j]
			jprev := prevleaf[i]
			prevleaf[i] = int32(j)
			delta[j]++
			if jprev >= 0 {
				// q = lca(jprev, j): the root of jprev's set, with path compression.
				q := jprev
				for q != ancestor[q] {
					q = ancestor[q]
				}
				for s := jprev; s != q; {
					nx := ancestor[s]
					ancestor[s] = q
					s = nx
				}
				delta[q]--
			}
		}
		if parent[j] >= 0 {
			ancestor[j] = parent[j]
		}
	}
	for j := 0; j < n; j++ {
		if parent[j] >= 0 {
			delta[parent[j]] += delta[j]
		}
	}
	return delta
}
