package ui

import "time"

// storeChangedMsg is sent by waitStore (a re-arming command) when the
// session's store signals new items or changed call state.
type storeChangedMsg struct{ gen int64 }

// tickMsg is sent by tick every half second so running calls' durations
// and ETAs move even when the server is silent.
type tickMsg time.Time

// serverPromptMsg is sent by waitPrompt when the Responder hands over a
// server→client request for the user to answer.
type serverPromptMsg struct{ p *serverPrompt }

// promptGoneMsg is sent by watchPrompt when a server request's context ends
// (the server cancelled it, the session closed, or it was answered).
type promptGoneMsg struct{ p *serverPrompt }

// copiedMsg is sent by the copy command after the native clipboard write
// (OSC 52 is sent alongside by tea.SetClipboard).
type copiedMsg struct {
	what  string
	bytes int
	err   error
}

// flashMsg is sent by commands that want a line in the footer.
type flashMsg string

// taskFollowedMsg is sent when following a 2026 extension task ended.
type taskFollowedMsg struct{ id, note string }
