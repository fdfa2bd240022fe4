package sparse

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"glle/parallel"
)

// randomOrderTree returns a random ordering of the n vertices of adj, its inverse and the
// elimination tree for it, computed in one run of etree.
func randomOrderTree(rng *rand.Rand, adj adjacency[int], n int) (perm, ip, parent []int32) {
	perm = make([]int32, n)
	for i, v := range rng.Perm(n) {
		perm[i] = int32(v)
	}
	ip = make([]int32, n)
	for k, v := range perm {
		ip[v] = int32(k)
	}
	parent = make([]int32, n)
	etree(adj, perm, ip, parent, make([]int32, n))
	return perm, ip, parent
}

// TestEtreeColsResumable checks that Liu's algorithm run in pieces, with the inverse
// permutation filled only as far as the columns visited (the follower's situation), gives
// the tree of one run over all columns with the complete inverse permutation.
func TestEtreeColsResumable(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := 0; trial < 30; trial++ {
		n := 1 + rng.IntN(600)
		a := randomSPD(rng, n, rng.IntN(12), true)
		adj := adjacency[int]{a.rowPtr, a.colIdx}
		perm, ip, want := randomOrderTree(rng, adj, n)
		anc := make([]int32, n)

		ip2, got := make([]int32, n), make([]int32, n)
		for i := range ip2 {
			ip2[i] = -1
		}
		// Pieces of random length, including empty ones and single columns.
		for k0 := 0; k0 < n; {
			k1 := min(n, k0+rng.IntN(40))
			etreeCols(adj, perm, ip2, got, anc, k0, k1)
			k0 = k1
		}
		if !slices.Equal(got, want) || !slices.Equal(ip2, ip) {
			t.Fatalf("n = %d: the elimination tree built in pieces differs", n)
		}
	}
}

// TestEtreeFollower drives the follower with a simulated ordering: it must build the whole
// tree by itself once released (finish then has nothing left to do), build nothing while it
// is not released, and give the same tree either way.
func TestEtreeFollower(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	n := 3000
	a := randomSPD(rng, n, 8, true)
	adj := adjacency[int]{a.rowPtr, a.colIdx}
	order, ip, want := randomOrderTree(rng, adj, n)

	for _, release := range []bool{true, false} {
		help := make(chan struct{})
		if release {
			close(help)
		}
		perm := make([]int32, 0, n)
		prog := newAMDProgress()
		f := newEtreeFollower(adj, perm, prog, help)
		// Publish the ordering in steps of 700 pivots, as AMD does every 1024 pivots.
		for k := 0; k < n; k = min(n, k+700) {
			perm = append(perm, order[k:min(n, k+700)]...)
			prog.publish(len(perm))
		}
		deadline := time.Now().Add(10 * time.Second)
		for release {
			f.mu.Lock()
			k := f.k
			f.mu.Unlock()
			if k == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the released follower reached column %d of %d in 10 s", k, n)
			}
			time.Sleep(time.Millisecond)
		}
		if !release {
			time.Sleep(20 * time.Millisecond) // time it would have had
			f.mu.Lock()
			k := f.k
			f.mu.Unlock()
			if k != 0 {
				t.Fatalf("the follower built %d columns without being released", k)
			}
		}
		gotIP, got, _ := f.finish(perm)
		if !slices.Equal(got, want) || !slices.Equal(gotIP, ip) {
			t.Fatalf("release = %v: the follower's elimination tree differs", release)
		}
	}
}

// sameAnalysis reports whether two analyses agree in everything a factorization uses.
func sameAnalysis(s, r *Symbolic) bool {
	return slices.Equal(s.perm, r.perm) && slices.Equal(s.iperm, r.iperm) && slices.Equal(s.parent, r.parent) &&
		slices.Equal(s.colCnt, r.colCnt) && slices.Equal(s.sFirst, r.sFirst) && slices.Equal(s.sParent, r.sParent) &&
		slices.Equal(s.sRowPtr, r.sRowPtr) && slices.Equal(s.sRows, r.sRows) && slices.Equal(s.sRel, r.sRel) &&
		slices.Equal(s.lxPtr, r.lxPtr) && slices.Equal(s.aPtr, r.aPtr) && slices.Equal(s.aSrc, r.aSrc) &&
		slices.Equal(s.aDst, r.aDst) && slices.Equal(s.sOf, r.sOf) && s.ns == r.ns && s.nnzExact == r.nnzExact &&
		s.nnzL == r.nnzL && s.flops == r.flops
}

// TestAnalyzeHelper checks that SymbolicOptions.Helper changes nothing in the result whenever
// the helper is released: before the analysis (the elimination tree follows AMD from its
// first published pivots, the assembly map's first half runs beside the row structures),
// during it, or never.
func TestAnalyzeHelper(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	n := 20000
	if testing.Short() {
		n = 3000 // one or two AMD publications (every 1024 pivot steps)
	}
	a, _ := knnLLE(rng, n, 10)
	ctx := context.Background()
	ref, err := Analyze(ctx, n, a.rowPtr, a.colIdx, SymbolicOptions{Symmetric: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []time.Duration{-1, 0, time.Millisecond, 5 * time.Millisecond, time.Hour} {
		help := make(chan struct{})
		switch {
		case when < 0:
			close(help)
		case when < time.Hour:
			time.AfterFunc(when, func() { close(help) })
		}
		s, err := Analyze(ctx, n, a.rowPtr, a.colIdx, SymbolicOptions{Symmetric: true, Helper: help, PrepareFactor: true})
		if err != nil {
			t.Fatal(err)
		}
		if !sameAnalysis(s, ref) {
			t.Fatalf("helper released after %v: the analysis differs from the one without a helper", when)
		}
		// Released before the analysis, the follower has AMD's whole run (about 20
		// publications at n = 20000) to build columns beside it.
		if when < 0 && !testing.Short() && s.followed == 0 {
			t.Errorf("helper released before the analysis: the follower built no column beside AMD")
		}
		t.Logf("helper released after %v: %d of %d tree columns built beside AMD", when, s.followed, n)
		f := NewFactor(s)
		if err := f.Factorize(ctx, a.val, -1e-6); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnalyzeHelperCancel cancels analyses with a released helper during AMD: each returns the
// context's error and leaves no goroutine behind (the follower ends with the analysis).
func TestAnalyzeHelperCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	a, _ := knnLLE(rng, 20000, 10)
	before := runtime.NumGoroutine()
	canceled := 0
	for _, after := range []time.Duration{-1, 0, time.Millisecond, 3 * time.Millisecond} {
		help := make(chan struct{})
		close(help)
		ctx, cancel := context.WithCancel(context.Background())
		if after < 0 {
			cancel() // AMD checks ctx every 4096 pivot steps: it stops at the first check
		} else {
			time.AfterFunc(after, cancel)
		}
		_, err := Analyze(ctx, a.n, a.rowPtr, a.colIdx, SymbolicOptions{Symmetric: true, Helper: help})
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled after %v: %v", after, err)
		}
		if err != nil {
			canceled++
		}
	}
	// A matrix small enough that AMD never checks ctx (fewer than 4096 pivot steps): the
	// cancellation is seen after AMD, before the tree is finished; helper released or not.
	small, _ := knnLLE(rng, 500, 10)
	for _, release := range []bool{true, false} {
		help := make(chan struct{})
		if release {
			close(help)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Analyze(ctx, small.n, small.rowPtr, small.colIdx, SymbolicOptions{Symmetric: true, Helper: help}); !errors.Is(err, context.Canceled) {
			t.Fatalf("n = 500, cancelled context, helper released %v: %v", release, err)
		}
		canceled++
	}
	if canceled < 3 {
		t.Errorf("only %d of 6 analyses saw their cancellation", canceled)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after the cancelled analyses, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAMDPublishesFinalPivots checks that every prefix of the ordering AMD publishes is final:
// read at the moment of publication (AMD paused), it equals the same prefix of the result.
// (Reading it concurrently, as the follower does, is covered by the race detector on
// TestAnalyzeHelper.)
func TestAMDPublishesFinalPivots(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	a, _ := knnLLE(rng, 20000, 10)
	n := a.n
	perm := make([]int32, 0, n)
	full := perm[:n]
	for i := range full {
		full[i] = -1 // entries not yet written show as -1
	}
	prog := newAMDProgress()
	var snaps [][]int32
	prog.seen = func(k int) { snaps = append(snaps, append([]int32(nil), full[:k]...)) }
	final, err := amdOrderCounts(context.Background(), buildGraph(n, a.rowPtr, a.colIdx), perm, prog, nil, ruleMeanFill)
	if err != nil {
		t.Fatal(err)
	}
	if len(final) != n {
		t.Fatalf("AMD returned %d pivots, want %d", len(final), n)
	}
	if len(snaps) < n/(2*publishEvery) {
		t.Fatalf("AMD published %d times on a %d-vertex graph, want at least %d", len(snaps), n, n/(2*publishEvery))
	}
	for _, sn := range snaps {
		if !slices.Equal(sn, final[:len(sn)]) {
			t.Fatalf("the published prefix of %d pivots differs from the final ordering's", len(sn))
		}
	}
	t.Logf("%d publications, the last at %d of %d vertices", len(snaps), len(snaps[len(snaps)-1]), n)
}

// TestAnalyzeHelperPanic: a panic in the follower goroutine (a bug, injected by followerHook
// with the follower's mutex held) reaches Analyze's caller as a *parallel.WorkerPanic instead
// of ending the process or leaving finish waiting for the mutex.
func TestAnalyzeHelperPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 47))
	a, _ := knnLLE(rng, 20000, 10)
	followerHook = func() { panic("follower bug") }
	defer func() { followerHook = nil }()
	help := make(chan struct{})
	close(help)
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_, _ = Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{Symmetric: true, Helper: help})
	}()
	select {
	case got := <-done:
		if wp, ok := got.(*parallel.WorkerPanic); !ok || wp.Value != "follower bug" {
			t.Fatalf("Analyze raised %v (%T), want the follower's *parallel.WorkerPanic", got, got)
		}
	case <-time.After(time.Minute):
		t.Fatal("Analyze did not return within a minute: finish waits for the follower's mutex")
	}
}
