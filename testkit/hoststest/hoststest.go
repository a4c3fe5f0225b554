// Package hoststest writes realistic MCP host configuration files into a
// temporary home, for the tests of package hosts and of the command line.
// Every secret in them contains Canary, so a test can check that none
// reaches any output. Test code only.
package hoststest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Canary is in every secret value of the example files.
const Canary = "CANARY"

// Env is a temporary home with every host's files written in it.
type Env struct {
	Home, Project string
	Files         map[string]string // by short name (see Write), the path written
}

// Setup makes a temporary home (HOME, XDG_CONFIG_HOME and XDG_STATE_HOME
// point into it) with a project directory, and writes the example files.
func Setup(t *testing.T) *Env {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	e := &Env{Home: home, Project: filepath.Join(home, "work", "proj"), Files: map[string]string{}}
	for name, f := range Examples {
		e.Write(t, name, f.Text)
	}
	return e
}

// Write writes text as the example file name (a key of Examples).
func (e *Env) Write(t *testing.T, name, text string) string {
	t.Helper()
	f, ok := Examples[name]
	if !ok {
		t.Fatalf("no example file %q", name)
	}
	base := e.Home
	if f.InProject {
		base = e.Project
	}
	path := filepath.Join(base, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	text = strings.ReplaceAll(text, "@PROJECT@", e.Project)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Files[name] = path
	return path
}

// File is one example file: where it goes (relative to the home, or to the
// project when InProject) and what it holds.
type File struct {
	Path      string
	InProject bool
	Text      string
}

// Examples are one realistic file per place a host keeps servers in.
var Examples = map[string]File{
	"claude-desktop": {Path: ".config/Claude/claude_desktop_config.json", Text: `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYdesktop000000000000000000000"
      }
    },
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/home/me/Documents"
      ]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`},
	"claude-code": {Path: ".claude.json", Text: `{
  "numStartups": 42,
  "mcpServers": {
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {
        "Authorization": "Bearer CANARY_sentry_token"
      }
    },
    "github": {
      "type": "stdio",
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYcode00000000000000000000000000"
      }
    }
  },
  "projects": {
    "@PROJECT@": {
      "allowedTools": [],
      "mcpServers": {
        "db": {
          "type": "stdio",
          "command": "uvx",
          "args": ["mcp-server-postgres", "--dsn", "postgresql://app:CANARYpw@localhost/app"],
          "env": {}
        }
      }
    },
    "/elsewhere/other": {
      "mcpServers": {
        "db": {
          "command": "node",
          "args": ["other.js"]
        }
      }
    }
  }
}
`},
	"claude-code-project": {Path: ".mcp.json", InProject: true, Text: `{
  "mcpServers": {
    "api": {
      "type": "sse",
      "url": "${API_BASE:-https://api.example.com}/sse",
      "headers": {
        "X-API-Key": "${API_KEY}"
      }
    }
  }
}
`},
	"vscode": {Path: ".config/Code/User/mcp.json", Text: `// VS Code: MCP servers of this user
{
  "inputs": [
    {
      "type": "promptString",
      "id": "github_token",
      "description": "GitHub personal access token",
      "password": true
    },
  ],
  "servers": {
    /* GitHub's remote server; the token is asked for */
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${input:github_token}"}, // prompted
    },
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"], // a trailing comma follows
      "env": {
        "MEMORY_FILE_PATH": "${userHome}/memory.json",
        "OPENAI_KEY": "${env:OPENAI_KEY}",
      },
    },
  },
}
`},
	"vscode-settings": {Path: ".config/Code/User/settings.json", Text: `{
  "editor.fontSize": 14,
  // where servers went before mcp.json
  "mcp": {
    "servers": {
      "time": {
        "command": "uvx",
        "args": ["mcp-server-time", "--local-timezone=Europe/Paris"]
      },
    },
  },
  "files.autoSave": "afterDelay",
}
`},
	"vscode-workspace": {Path: ".vscode/mcp.json", InProject: true, Text: `{
  "servers": {
    "local-tools": {
      "type": "stdio",
      "command": "node",
      "args": ["${workspaceFolder}/server.js"],
      "cwd": "${workspaceFolder}",
      "envFile": "${workspaceFolder}/.env"
    }
  }
}
`},
	"vscode-env": {Path: ".env", InProject: true, Text: "# secrets of the local tools\nexport TOOLS_TOKEN=\"CANARY_envfile\"\nMODE=dev\n"},
	"cursor": {Path: ".cursor/mcp.json", Text: `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYcursor0000000000000000000000"
      }
    },
    "linear": {
      "url": "https://mcp.linear.app/sse",
      "headers": {
        "Authorization": "Bearer CANARY_linear"
      },
      "disabled": true
    }
  }
}
`},
	"cursor-project": {Path: ".cursor/mcp.json", InProject: true, Text: `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"
      }
    }
  }
}
`},
	"windsurf": {Path: ".codeium/windsurf/mcp_config.json", Text: `{
  "mcpServers": {
    "brave-search": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-brave-search", "--api-key", "CANARY_brave_arg"],
      "env": {
        "BRAVE_API_KEY": "CANARY_brave"
      }
    },
    "remote": {
      "serverUrl": "https://example.com/mcp?api_key=CANARY_query&team=core",
      "headers": {
        "Authorization": "Bearer CANARY_windsurf"
      }
    }
  }
}
`},
	"gemini": {Path: ".gemini/settings.json", Text: `{
  // Gemini CLI keeps its MCP servers beside its other settings.
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {
        "DATABASE_URL": "$DB_CONNECTION_STRING",
        "API_KEY": "CANARY_gemini"
      },
      "timeout": 15000,
      "trust": false
    },
    "httpServer": {
      "httpUrl": "http://localhost:3000/mcp",
      "headers": {"Authorization": "Bearer CANARY_gemini_http"},
      "timeout": 5000
    },
    "sseServer": {
      "url": "http://localhost:8080/sse"
    }
  }
}
`},
	"gemini-project": {Path: ".gemini/settings.json", InProject: true, Text: `{
  "mcpServers": {
    "docs": {"command": "node", "args": ["docs-server.js"], "trust": true}
  }
}
`},
	"kiro": {Path: ".kiro/settings/mcp.json", Text: `{
  "mcpServers": {
    "fetch": {
      "command": "uvx",
      "args": ["mcp-server-fetch"],
      "env": {"FASTMCP_LOG_LEVEL": "ERROR"},
      "disabled": false,
      "autoApprove": []
    },
    "aws-docs": {
      "command": "uvx",
      "args": ["awslabs.aws-documentation-mcp-server@latest"],
      "disabled": true,
      "autoApprove": ["read_documentation"]
    }
  }
}
`},
	"kiro-project": {Path: ".kiro/settings/mcp.json", InProject: true, Text: `{
  "mcpServers": {
    "web": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer CANARY_kiro"}}
  }
}
`},
	"amazon-q": {Path: ".aws/amazonq/mcp.json", Text: `{
  "mcpServers": {
    "source-control": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/home/me/src"],
      "env": {},
      "timeout": 120000
    }
  }
}
`},
	"amazon-q-project": {Path: ".amazonq/mcp.json", InProject: true, Text: `{
  "mcpServers": {
    "sqlite": {"command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "./app.db"]}
  }
}
`},
	"zed": {Path: ".config/zed/settings.json", Text: `// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{
  "ui_font_size": 16,
  "context_servers": {
    "postgres": {
      "source": "custom",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-postgres",
        "postgresql://zed:CANARYzed@localhost/app"
      ],
      "env": {}
    },
    "notion": {
      "url": "https://mcp.notion.com/mcp",
      "headers": {"Authorization": "Bearer CANARY_zed"},
      "enabled": false
    },
    "old-style": {
      "command": {"path": "/usr/local/bin/old-mcp", "args": ["--stdio"], "env": {"TOKEN": "CANARY_zed_old"}}
    },
    // An extension's server: its command is the extension's business.
    "mcp-server-github": {"source": "extension", "settings": {"github_personal_access_token": "CANARY_zed_ext"}},
  },
}
`},
	"zed-project": {Path: ".zed/settings.json", InProject: true, Text: `{
  "context_servers": {
    "tools": {"command": "node", "args": ["tools.js"]} // the project's own
  }
}
`},
	"codex": {Path: ".codex/config.toml", Text: `model = "gpt-5-codex"

# MCP servers Codex starts.
[mcp_servers.context7]
command = "npx" # the runner
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
CONTEXT7_API_KEY = "CANARY_codex"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
enabled = false

[mcp_servers.repo]
command = 'uvx'
args = [
    "mcp-server-git",
    "--repository",
    "/home/me/src",
]
cwd = "/home/me/src"
startup_timeout_sec = 20
`},
	"codex-project": {Path: ".codex/config.toml", InProject: true, Text: `[mcp_servers."local tools"]
command = "./bin/tools"
env = { TOOLS_TOKEN = "CANARY_codex_project" }
`},
	"mcpscope": {Path: ".config/mcpscope/servers.json", Text: `{
  "mcpServers": {
    "everything": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"]
    },
    "local": {
      "url": "http://127.0.0.1:3001/mcp"
    }
  }
}
`},
}
