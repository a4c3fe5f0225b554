// Package release has no code: its test checks the release configuration
// (.goreleaser.yaml at the module root) against the cross-build step of
// scripts/test.sh, without GoReleaser, which is no dependency of this
// module.
package release
