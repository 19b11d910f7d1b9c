//! `trove`: see `trove --help`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = trove::cli::Cli::parse();
    if matches!(cli.command, trove::cli::Command::Serve { .. }) {
        // Before any thread starts: the server's memory stays bounded over its life (see `arenas`).
        trove::arenas::bound();
    }
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run(cli)),
        Err(e) => {
            eprintln!("error: could not start the runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: trove::cli::Cli) -> std::process::ExitCode {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr);
    // `TROVE_LOG_FORMAT=json`: one JSON object a line (time, level, target, fields), for a log collector.
    match std::env::var(trove::config::names::TROVE_LOG_FORMAT).ok().as_deref().map(str::trim) {
        None | Some("" | "text") => logs.init(),
        Some("json") => logs.json().init(),
        Some(other) => {
            eprintln!(
                "error: bad configuration: {}={other:?} must be text or json",
                trove::config::names::TROVE_LOG_FORMAT
            );
            return std::process::ExitCode::FAILURE;
        }
    }
    let result = match trove::Config::from_env() {
        Ok(config) => trove::cli::run(cli, config).await,
        Err(e) => Err(e.context("bad configuration")),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
