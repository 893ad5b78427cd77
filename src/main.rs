//! The `harness9` terminal binary: a thin command-line front end over the core library.

// Slicing a `str` by bytes panics inside a multibyte character, and much of our text
// comes from servers, files and models: each slice says why it is safe (an `allow` with
// its reason), or uses `get` or `truncate::prefix`.
#![warn(clippy::string_slice)]

mod cli;
#[cfg(feature = "tui")]
mod tui;

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "harness9",
    version,
    about = "An agent harness whose tools come from MCP servers"
)]
struct Cli {
    /// With no command, on a terminal: the terminal UI on the current folder.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect and use the MCP servers of a project.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run one agent turn without a UI: the answer on stdout, tool calls on stderr.
    Exec(cli::exec::ExecArgs),
    /// What a support request needs: versions, OS, display, PATH and runtimes, each
    /// server's command and status, the keychain (secrets masked).
    Doctor {
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Print a shell completion script, e.g. `harness9 completions bash > ~/.local/share/bash-completion/completions/harness9`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `harness9 man | man -l -`.
    Man,
    /// The terminal UI: chat, MCP bar and /mcp panel on a project folder.
    #[cfg(feature = "tui")]
    Tui {
        /// Project folder (default: the current folder).
        dir: Option<PathBuf>,
        /// Approve the project's servers for this run without asking.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Args, Clone)]
pub struct ProjectArgs {
    /// Project folder holding .mcp.json (default: the current folder).
    #[arg(long, global = true, default_value = ".")]
    project: PathBuf,
    /// Approve the project's servers for this run without asking.
    #[arg(long, global = true)]
    yes: bool,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand)]
enum TaskCommand {
    /// The server's tasks (its own list when it has one, else those harness9 started).
    List {
        server: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// How one task is now.
    Get {
        server: String,
        id: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Wait for one task's result and print it (exit code 1 when the tool failed).
    Result {
        server: String,
        id: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Cancel one task.
    Cancel {
        server: String,
        id: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
}

#[derive(Subcommand)]
enum McpCommand {
    /// Connect to every server and show its status.
    List {
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// List the tools of every server (or of one).
    Tools {
        /// Only this server.
        server: Option<String>,
        /// Show the tools held back because they changed since they were pinned, with a diff.
        #[arg(long, conflicts_with = "accept")]
        changed: bool,
        /// Accept the changed tools of SERVER (all of them, or only the TOOLs named).
        #[arg(long, num_args = 1.., value_name = "SERVER [TOOL]")]
        accept: Option<Vec<String>>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Call one tool and print its result.
    Call {
        server: String,
        tool: String,
        /// Arguments as a JSON object.
        args: Option<String>,
        /// Answers to the server's questions (elicitation): a JSON object of field values.
        /// Without it, every question is declined.
        #[arg(long, value_name = "FILE")]
        elicitation: Option<PathBuf>,
        /// When the call runs as a task, print its id and return at once (the task goes
        /// on; see `harness9 mcp task`). Not for stdio servers, whose tasks end with the
        /// process.
        #[arg(long)]
        detach: bool,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// The MCP tasks of a server: list them, or get, wait for the result of, or cancel
    /// one.
    #[command(subcommand)]
    Task(TaskCommand),
    /// Sign in to a remote server in the browser ($BROWSER, else the system opener) and
    /// keep its tokens.
    Login {
        server: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Forget the tokens kept for a remote server.
    Logout {
        server: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// The servers that may use your model without asking ("always for this server" in
    /// the sampling dialog); `--revoke SERVER` makes one ask again.
    Sampling {
        #[arg(long, value_name = "SERVER")]
        revoke: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Add a server: a URL (remote) or `-- COMMAND ARGS...` (local). Written to the local
    /// scope unless --scope says otherwise.
    Add {
        name: String,
        /// URL of a remote server (http or sse).
        url: Option<String>,
        /// Where to write it: local (you, this project; the default), project (.mcp.json,
        /// shared through the repository) or user (you, every project).
        #[arg(long, short = 's', default_value = cli::servers::DEFAULT_SCOPE,
              value_parser = cli::servers::SCOPES)]
        scope: String,
        /// stdio, http or sse (default: http for a URL, stdio for a command).
        #[arg(long, short = 't', value_parser = ["stdio", "http", "sse"])]
        transport: Option<String>,
        /// An environment variable of a local server, `KEY=value` (repeatable).
        #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header of a remote server, `Name: value` (repeatable).
        #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// The command of a local server and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Add a server from its JSON entry, e.g. '{"command":"npx","args":["-y","server"]}'.
    #[command(name = "add-json")]
    AddJson {
        name: String,
        #[arg(value_name = "JSON")]
        entry: String,
        #[arg(long, short = 's', default_value = cli::servers::DEFAULT_SCOPE,
              value_parser = cli::servers::SCOPES)]
        scope: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Show one server's entry in effect: its scope and file, secrets masked.
    Get {
        name: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Remove a server (from --scope, or from the only scope that has it).
    Remove {
        name: String,
        #[arg(long, short = 's', value_parser = cli::servers::SCOPES)]
        scope: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Import the servers configured in another tool.
    Import {
        /// The tool to read.
        #[arg(long, value_parser = ["claude-desktop", "claude-code", "cursor", "vscode", "codex"])]
        from: String,
        /// Where to write them (as for `add`).
        #[arg(long, short = 's', default_value = cli::servers::DEFAULT_SCOPE,
              value_parser = cli::servers::SCOPES)]
        scope: String,
        /// Show what would be added, skipped and renamed; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// For a name the scope already has with another entry: skip it, or add it as NAME-2.
        #[arg(long, default_value = "skip", value_parser = ["skip", "rename"])]
        on_conflict: String,
        /// The value of one of the tool's inputs (VS Code's `${input:ID}`), NAME=VALUE
        /// (repeatable); on a terminal the others are asked.
        #[arg(long = "input", value_name = "NAME=VALUE")]
        inputs: Vec<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Search the configured MCP registries (all servers without QUERY): name, latest
    /// version, how it runs, description.
    Search {
        /// Part of the server's name.
        query: Option<String>,
        /// At most this many results (default: every match).
        #[arg(long)]
        limit: Option<usize>,
        /// Ask this registry only (default: HARNESS9_REGISTRY, else "registries" in the
        /// settings file).
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Install a server from a registry, NAME or NAME@VERSION: shows the entry it writes,
    /// asks for the values it needs (secrets without echo, kept in the credential store),
    /// and writes it after you confirm (or with --yes). A path ending in .mcpb (or any
    /// existing file) is a bundle: unpacked into harness9's data folder.
    Install {
        #[arg(value_name = "NAME[@VERSION] | FILE.mcpb")]
        target: String,
        /// Where to write it (as for `add`; default: local, or user for a bundle, which
        /// cannot go in the project scope).
        #[arg(long, short = 's', value_parser = cli::servers::SCOPES)]
        scope: Option<String>,
        /// A bundle's user_config value, KEY=VALUE (repeatable; a key given several times
        /// has several values).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// Its name in harness9 (default: the last part of the registry name).
        #[arg(long)]
        name: Option<String>,
        /// A value it asks for, NAME=VALUE (repeatable; secrets too).
        #[arg(long = "env", short = 'e', value_name = "NAME=VALUE")]
        values: Vec<String>,
        /// Install this kind of package (default: the first whose runner is on the servers'
        /// PATH, in the order npm, pypi, oci, nuget, then the remote).
        #[arg(long, value_name = "TYPE", conflicts_with = "remote",
              value_parser = ["npm", "pypi", "oci", "nuget", "mcpb"])]
        package: Option<String>,
        /// Install its remote (a URL) rather than a package.
        #[arg(long)]
        remote: bool,
        /// Ask this registry only.
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
        /// Show the entry and what it asks for; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Servers installed from a registry that have a newer version there.
    Outdated {
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Update a server installed from a registry to its latest version: shows the old and
    /// new command, and writes after you confirm (or with --yes).
    Update {
        server: String,
        /// A value it asks for, NAME=VALUE (repeatable).
        #[arg(long = "env", short = 'e', value_name = "NAME=VALUE")]
        values: Vec<String>,
        /// The scope of the entry (default: the one in effect).
        #[arg(long, short = 's', value_parser = cli::servers::SCOPES)]
        scope: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// The value of a server's ${input:NAME}, kept in the credential store: `set` asks for
    /// it (without echo; or reads it from stdin), `remove` forgets it. `mcp get` shows
    /// which are set.
    Secret {
        #[arg(value_parser = ["set", "remove"])]
        action: String,
        server: String,
        /// The input's name (as in ${input:NAME}).
        name: String,
        #[command(flatten)]
        project: ProjectArgs,
    },
    #[command(flatten)]
    Surface(cli::surface::SurfaceCommand),
    /// Run harness9 as an MCP server on stdio with built-in tools confined to the project.
    Serve {
        #[command(flatten)]
        project: ProjectArgs,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Benchmark installing a bundle: plan and unpack a 20 MB .mcpb made on the spot, in a
    /// temporary folder.
    Bundle {
        /// Fewer runs (smoke test).
        #[arg(long)]
        quick: bool,
    },
    /// Benchmark the agent engine: overhead per model round-trip, tool search over 10,000 tools.
    Engine {
        /// Fewer repetitions (smoke test).
        #[arg(long)]
        quick: bool,
    },
    /// Benchmark following MCP tasks: CPU and memory while 1,000 tasks on 10 HTTP fixture
    /// servers are polled every second.
    Tasks {
        /// A shorter measurement (smoke test).
        #[arg(long)]
        quick: bool,
        /// The tasks fixture server (default: `mcp-tasks-fixture` beside this program;
        /// `cargo build -p harness9-fixtures` builds it).
        #[arg(long, value_name = "PATH")]
        fixture: Option<PathBuf>,
        /// Tasks started.
        #[arg(long, default_value_t = harness9::bench::tasks::TASKS)]
        tasks: usize,
        /// Servers they are spread over.
        #[arg(long, default_value_t = harness9::bench::tasks::SERVERS)]
        servers: usize,
    },
    /// Benchmark the MCP client: `bench mcp -- CMD ARGS...` (stdio) or `bench mcp --http URL`.
    Mcp {
        /// Comma-separated scenarios (default: all).
        #[arg(long)]
        scenarios: Option<String>,
        /// Fewer calls and repetitions (smoke test).
        #[arg(long)]
        quick: bool,
        /// A running Streamable HTTP server to benchmark instead of a stdio command.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        http: Option<String>,
        /// With --http: a header sent on every request, `Name: value` (repeatable).
        #[arg(long = "header", value_name = "NAME: VALUE", requires = "http")]
        headers: Vec<String>,
        /// The protocol era spoken to a stdio server: legacy (the initialize handshake,
        /// default), modern (2026-07-28) or auto (probe first).
        #[arg(long, value_name = "ERA", default_value = "legacy", conflicts_with = "http",
              value_parser = ["legacy", "modern", "auto"])]
        era: String,
        /// Runs each scenario this many times; its line is the run with the median value.
        #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "http",
              value_parser = clap::value_parser!(u16).range(1..=100))]
        runs: u16,
        /// Skip the floor. By default every run of a stdio scenario (except big_features)
        /// is preceded by a run of a minimal client (blocking std I/O, answers parsed into
        /// generic JSON, no MCP library) against the same server, and each line adds the
        /// floor's median (`floor`) and `ours_over_floor`. Not run with --era auto.
        #[arg(long, conflicts_with = "http")]
        no_floor: bool,
        /// The server command and its arguments. The repository's fixture server, made
        /// for this: `cargo build --release -p harness9-fixtures`, then
        /// `-- target/release/mcp-fixture`.
        #[arg(last = true, required_unless_present = "http")]
        command: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    // Logs on stderr would draw over the terminal UI.
    #[cfg(feature = "tui")]
    let wants_tui = matches!(cli.command, None | Some(Command::Tui { .. }));
    #[cfg(not(feature = "tui"))]
    let wants_tui = false;
    if !wants_tui {
        cli::init_tracing();
    }
    let Some(command) = cli.command else {
        #[cfg(feature = "tui")]
        std::process::exit(cli::run_async(tui::run(PathBuf::from("."), false)));
        #[cfg(not(feature = "tui"))]
        {
            eprintln!("harness9: a command is needed; see harness9 --help");
            std::process::exit(2);
        }
    };
    let code = match command {
        #[cfg(feature = "tui")]
        Command::Tui { dir, yes } => {
            cli::run_async(tui::run(dir.unwrap_or_else(|| PathBuf::from(".")), yes))
        }
        Command::Mcp(McpCommand::List { project }) => cli::run_async(cli::list(project)),
        Command::Mcp(McpCommand::Tools {
            server,
            changed,
            accept,
            project,
        }) => match (changed, accept) {
            (_, Some(what)) => cli::run_async(cli::pins::accept(project, what)),
            (true, None) => cli::run_async(cli::pins::changed(project, server)),
            (false, None) => cli::run_async(cli::tools(project, server)),
        },
        Command::Mcp(McpCommand::Call {
            server,
            tool,
            args,
            elicitation,
            detach,
            project,
        }) => cli::run_async(cli::call(project, server, tool, args, elicitation, detach)),
        Command::Mcp(McpCommand::Task(command)) => {
            use cli::tasks::TaskAction;
            let (project, server, action) = match command {
                TaskCommand::List { server, project } => (project, server, TaskAction::List),
                TaskCommand::Get {
                    server,
                    id,
                    project,
                } => (project, server, TaskAction::Get(id)),
                TaskCommand::Result {
                    server,
                    id,
                    project,
                } => (project, server, TaskAction::Result(id)),
                TaskCommand::Cancel {
                    server,
                    id,
                    project,
                } => (project, server, TaskAction::Cancel(id)),
            };
            cli::run_async(cli::tasks::run(project, server, action))
        }
        Command::Mcp(McpCommand::Serve { project }) => cli::run_async(cli::serve(project)),
        Command::Mcp(McpCommand::Login { server, project }) => {
            cli::run_async(cli::login::login(project, server))
        }
        Command::Mcp(McpCommand::Logout { server, project }) => {
            cli::run_async(cli::login::logout(project, server))
        }
        Command::Mcp(McpCommand::Sampling { revoke, project }) => {
            cli::run_async(cli::sampling::run(project, revoke))
        }
        Command::Mcp(McpCommand::Add {
            name,
            url,
            scope,
            transport,
            env,
            headers,
            command,
            project,
        }) => cli::servers::add(
            project,
            cli::servers::AddArgs {
                name,
                scope,
                parts: harness9::config::servers::AddParts {
                    transport,
                    env,
                    headers,
                    url,
                    command,
                },
            },
        ),
        Command::Mcp(McpCommand::AddJson {
            name,
            entry,
            scope,
            project,
        }) => cli::servers::add_json(project, name, entry, scope),
        Command::Mcp(McpCommand::Get { name, project }) => cli::servers::get(project, name),
        Command::Mcp(McpCommand::Remove {
            name,
            scope,
            project,
        }) => cli::servers::remove(project, name, scope),
        Command::Mcp(McpCommand::Import {
            from,
            scope,
            dry_run,
            on_conflict,
            inputs,
            project,
        }) => cli::servers::import(
            project,
            cli::servers::ImportArgs {
                from,
                scope,
                dry_run,
                on_conflict,
                inputs,
            },
        ),
        Command::Mcp(McpCommand::Search {
            query,
            limit,
            registry,
            project,
        }) => cli::run_async(cli::install::search(project, query, limit, registry)),
        Command::Mcp(McpCommand::Install {
            target,
            scope,
            config,
            name,
            values,
            package,
            remote,
            registry,
            dry_run,
            project,
        }) => cli::run_async(cli::install::install(
            project,
            cli::install::InstallArgs {
                target,
                scope,
                config,
                name,
                values,
                package,
                remote,
                registry,
                dry_run,
            },
        )),
        Command::Mcp(McpCommand::Outdated { project }) => {
            cli::run_async(cli::install::outdated(project))
        }
        Command::Mcp(McpCommand::Update {
            server,
            values,
            scope,
            project,
        }) => cli::run_async(cli::install::update(project, server, values, scope)),
        Command::Mcp(McpCommand::Secret {
            action,
            server,
            name,
            project,
        }) => cli::run_async(cli::install::secret(
            project,
            server,
            name,
            action == "remove",
        )),
        Command::Mcp(McpCommand::Surface(command)) => cli::run_async(cli::surface::run(command)),
        Command::Bench(BenchCommand::Mcp {
            scenarios,
            quick,
            http: Some(url),
            headers,
            ..
        }) => {
            let mut parsed = Vec::new();
            for h in &headers {
                match h.split_once(':') {
                    Some((k, v)) => parsed.push((k.trim().to_string(), v.trim().to_string())),
                    None => {
                        eprintln!("harness9: --header must be \"Name: value\", not \"{h}\"");
                        std::process::exit(2);
                    }
                }
            }
            harness9::bench::http::run_http(&harness9::bench::http::HttpBenchOptions {
                url,
                headers: parsed,
                scenarios,
                quick,
            })
        }
        Command::Bench(BenchCommand::Mcp {
            scenarios,
            quick,
            command,
            http: None,
            era,
            runs,
            no_floor,
            ..
        }) => {
            let era = match era.as_str() {
                "modern" => harness9::config::ProtocolEra::Modern,
                "auto" => harness9::config::ProtocolEra::Auto,
                _ => harness9::config::ProtocolEra::Legacy,
            };
            harness9::bench::run(
                scenarios.as_deref(),
                quick,
                usize::from(runs),
                &command,
                era,
                !no_floor,
            )
        }
        Command::Bench(BenchCommand::Engine { quick }) => harness9::bench::engine::run(quick),
        Command::Bench(BenchCommand::Bundle { quick }) => harness9::bench::bundle::run(quick),
        Command::Bench(BenchCommand::Tasks {
            quick,
            fixture,
            tasks,
            servers,
        }) => cli::run_async(harness9::bench::tasks::run(quick, fixture, tasks, servers)),
        Command::Exec(args) => cli::run_async(cli::exec::exec(args)),
        Command::Doctor { project } => cli::run_async(cli::doctor::run(project)),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "harness9", &mut std::io::stdout());
            0
        }
        Command::Man => {
            let man = clap_mangen::Man::new(Cli::command());
            match man.render(&mut std::io::stdout()) {
                Ok(()) => 0,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
                Err(e) => {
                    eprintln!("harness9: could not write the man page: {e}");
                    cli::EXIT_FAILED
                }
            }
        }
    };
    std::process::exit(code);
}
