package statestore

import "sync"

// Queue runs store writes made under a caller's lock (a task's record)
// later, in the order they were made, off that lock: with Redis a write is
// a network call. The zero Queue is ready.
type Queue struct {
	mu      sync.Mutex
	ops     []func()
	drained chan struct{} // closed when the queue runs empty (nil: idle)
}

// Add runs op after the ops added before it; it never blocks (callable
// under a lock). running counts the runner while it runs, so its owner can
// wait for the writes at close.
func (q *Queue) Add(running *sync.WaitGroup, op func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ops = append(q.ops, op)
	if q.drained != nil {
		return // the runner takes it
	}
	q.drained = make(chan struct{})
	running.Add(1)
	go func() {
		defer running.Done()
		for {
			q.mu.Lock()
			if len(q.ops) == 0 {
				close(q.drained)
				q.drained = nil
				q.mu.Unlock()
				return
			}
			op := q.ops[0]
			q.ops = q.ops[1:]
			q.mu.Unlock()
			op()
		}
	}()
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done is closed once the ops added so far have run.
func (q *Queue) Done() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.drained == nil {
		return closedCh
	}
	return q.drained
}
