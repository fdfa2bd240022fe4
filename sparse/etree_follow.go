package sparse

import (
	"sync"
	"sync/atomic"

	"glle/parallel"
)

// amdProgress publishes how many entries of an AMD ordering are fixed while it runs.
type amdProgress struct {
	n    atomic.Int64
	more chan struct{} // capacity 1: a signal that n grew
	// seen, if set, is called by publish on AMD's goroutine, AMD paused (tests).
	seen func(k int)
}

func newAMDProgress() *amdProgress { return &amdProgress{more: make(chan struct{}, 1)} }

// publish records that the first k pivots are written and wakes a waiting reader.
func (p *amdProgress) publish(k int) {
	if p.seen != nil {
		p.seen(k)
	}
	p.n.Store(int64(k))
	select {
	case p.more <- struct{}{}:
	default:
	}
}

// etreeFollower computes the elimination tree of an AMD ordering while AMD still runs. Liu's
// algorithm visits the columns in elimination order and AMD fixes that order pivot by pivot,
// so a second goroutine can follow it: once released by help it extends the tree up to the
// published pivots, batch after batch. finish, called by the analysis when AMD is done,
// completes the tree on the caller's goroutine from wherever the follower got, so the result
// is the same whoever computed which columns (and the follower may never have run).
type etreeFollower[I int | int32] struct {
	a    adjacency[I]
	perm []int32 // AMD's output, capacity n; entries below prog.n are final
	prog *amdProgress

	mu                  sync.Mutex // held while columns are added
	k                   int        // columns done
	done                bool       // finish has run: the follower must not touch the arrays
	ip, parent, ancestr []int32

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	followed int // columns the follower goroutine built (tests)

	panic  parallel.PanicBox // a panic of the follower, raised again by finish or abandon
	raised atomic.Bool       // the panic was raised already (abandon after finish)
}

// followerHook, when set (tests only), runs in the follower goroutine each time it adds
// columns, with the mutex held.
var followerHook func()

// newEtreeFollower starts the follower goroutine, which waits for help to be closed (or for
// finish) before it does anything.
func newEtreeFollower[I int | int32](a adjacency[I], perm []int32, prog *amdProgress, help <-chan struct{}) *etreeFollower[I] {
	n := cap(perm)
	f := &etreeFollower[I]{a: a, perm: perm[:n], prog: prog, stop: make(chan struct{}),
		ip: make([]int32, n), parent: make([]int32, n), ancestr: make([]int32, n)}
	for i := range f.ip {
		f.ip[i] = -1
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		locked := false
		defer func() {
			// A panic (a bug) releases the mutex, so that finish does not block, and is
			// raised again on finish's or abandon's goroutine.
			if r := recover(); r != nil {
				f.panic.Record(r)
				if locked {
					f.mu.Unlock()
				}
			}
		}()
		select {
		case <-help:
		case <-f.stop:
			return
		}
		for {
			f.mu.Lock()
			locked = true
			if f.done {
				f.mu.Unlock()
				return
			}
			if k1 := int(prog.n.Load()); k1 > f.k {
				if followerHook != nil {
					followerHook()
				}
				etreeCols(f.a, f.perm, f.ip, f.parent, f.ancestr, f.k, k1)
				f.followed += k1 - f.k
				f.k = k1
			}
			locked = false
			f.mu.Unlock()
			select {
			case <-prog.more:
			case <-f.stop:
				return
			}
		}
	}()
	return f
}

// finish completes the tree for the whole ordering perm (AMD's result, len n) on the calling
// goroutine, waits for the follower to end and returns the inverse permutation, the tree
// and the follower's scratch.
func (f *etreeFollower[I]) finish(perm []int32) (ip, parent, scratch []int32) {
	f.stopOnce.Do(func() { close(f.stop) })
	f.mu.Lock()
	etreeCols(f.a, perm, f.ip, f.parent, f.ancestr, f.k, len(perm))
	f.k = len(perm)
	f.done = true
	f.mu.Unlock()
	f.wg.Wait()
	f.raise()
	return f.ip, f.parent, f.ancestr
}

// abandon ends the follower without completing the tree (AMD failed, or the analysis ends
// early); after finish, or a second time, it only waits for the follower, which has ended.
func (f *etreeFollower[I]) abandon() {
	f.stopOnce.Do(func() { close(f.stop) })
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
	f.wg.Wait()
	f.raise()
}

// raise panics with the follower's recorded panic, once.
func (f *etreeFollower[I]) raise() {
	if !f.raised.Swap(true) {
		f.panic.Repanic()
	}
}
