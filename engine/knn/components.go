package knn

// Components returns the connected components of the symmetrized kNN graph on n vertices
// whose row i lists the neighbours idx[i*k:(i+1)*k] (the layout Graph returns): an edge i-j
// exists if j is among i's neighbours or i among j's. label[i] is the component of vertex i;
// components are numbered 0..count-1 in order of their lowest vertex, so the labelling is
// deterministic. It panics if len(idx) != n*k or a neighbour index is outside [0, n).
func Components(n, k int, idx []int32) (count int, label []int32) {
	if n < 0 || k < 0 || len(idx) != n*k {
		panic("knn: Components: len(idx) != n*k")
	}
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]] // path halving
			i = parent[i]
		}
		return i
	}
	for i := 0; i < n; i++ {
		for _, j := range idx[i*k : i*k+k] {
			if j < 0 || int(j) >= n {
				panic("knn: Components: neighbour index outside [0, n)")
			}
			a, b := find(int32(i)), find(j)
			if a == b {
				continue
			}
			// Link the larger root under the smaller one: roots stay the lowest vertex.
			if a < b {
				parent[b] = a
			} else {
				parent[a] = b
			}
		}
	}
	label = make([]int32, n)
	for i := 0; i < n; i++ {
		r := find(int32(i))
		if r == int32(i) {
			label[i] = int32(count)
			count++
		} else {
			label[i] = label[r]
		}
	}
	return count, label
}
