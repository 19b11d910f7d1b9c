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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
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
