package statestore

import "time"

// Progress is the latest progress of a call and enough history for a rate.
type Progress struct {
	Value      float64
	Total      float64 // 0 when the server gave none
	Message    string
	Updates    int
	FirstValue float64
	FirstAt    time.Time
	LastAt     time.Time
}

// Step counts one progress notification.
func (p *Progress) Step(value, total float64, message string, at time.Time) {
	if p.Updates == 0 {
		p.FirstValue, p.FirstAt = value, at
	}
	p.Updates++
	p.Value, p.Total, p.LastAt = value, total, at
	if message != "" {
		p.Message = message
	}
}

// Rate is progress units per second since the first update (0 if unknown).
func (p Progress) Rate() float64 {
	d := p.LastAt.Sub(p.FirstAt).Seconds()
	if p.Updates < 2 || d <= 0 {
		return 0
	}
	return (p.Value - p.FirstValue) / d
}

// ETA estimates the time left (0 if unknown).
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r <= 0 || p.Total <= p.Value {
		return 0
	}
	return time.Duration((p.Total - p.Value) / r * float64(time.Second))
}
