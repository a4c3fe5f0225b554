package cli

import (
	"os"

	"github.com/spf13/cobra"

	"mcpscope/conformance"
)

func newClientCmd() *cobra.Command {
	var f connFlags
	var browserLogin bool
	cmd := &cobra.Command{
		Use:     "client URL",
		Short:   "The client the MCP conformance suite drives: does what $MCP_CONFORMANCE_SCENARIO expects",
		GroupID: groupServers,
		Example: `  npx @modelcontextprotocol/conformance client --command "mcpscope client" --scenario initialize
  mcpscope client tools_call http://localhost:3001/mcp     # by hand`,
		Args: headlessArgs(0, 1, "at most a scenario name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			own, url, command := split(cmd, args)
			name := cmd.CommandPath()
			scenario := os.Getenv(conformance.EnvScenario)
			switch {
			case scenario == "" && len(own) == 1:
				scenario = own[0] // by hand: mcpscope client SCENARIO URL
			case len(own) > 0:
				return usagef(name, "client takes only the server URL (and, without %s, a scenario name); got %q", conformance.EnvScenario, own)
			}
			sp, err := f.spec(cmd, url, command)
			if err != nil {
				return err
			}
			if sp.URL == "" {
				return usagef(name, "client needs the scenario server's URL as its last argument (the conformance suite appends it)")
			}
			if scenario == "" {
				return usagef(name, "client needs a scenario: set %s (the conformance suite does) or give its name before the URL", conformance.EnvScenario)
			}
			sp.Grace = oneShotGrace
			sp.Notes = cmd.ErrOrStderr()
			if !sp.NoJournal && sp.Journal == "" {
				sp.NoJournal = true // as conformance.Run would: --otlp alone leaves no journal behind
			}
			live, err := f.otlp.start(cmd, &sp)
			if err != nil {
				return err
			}
			defer live.finish() // after the run closed its session: its last spans
			return conformance.Run(cmd.Context(), sp, scenario, browserLogin, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&browserLogin, "browser-login", false, "log in through the loopback redirect and $BROWSER, as a person would")
	return cmd
}
