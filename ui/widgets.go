package ui

import (
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/textbox"
)

// The root's short names for the shared widgets (ui/widget), which the
// views in their own packages use directly.
var (
	block         = widget.Block
	fit           = widget.Fit
	pad           = widget.Pad
	clamp         = widget.Clamp
	firstNonEmpty = widget.FirstNonEmpty
	fmtDur        = widget.Dur
	humanBytes    = widget.Bytes
	oneLine       = widget.OneLine
	eventText     = widget.EventText
	chainText     = widget.ChainText

	newLine      = textbox.NewLine
	lineStyles   = textbox.LineStyles
	newArea      = textbox.NewArea
	sizeArea     = textbox.SizeArea
	jsonProblem  = textbox.JSONProblem
	externalEdit = textbox.ExternalEdit
)

// editedMsg is what $EDITOR gave back, for the form.
type editedMsg struct {
	text string
	err  error
}
