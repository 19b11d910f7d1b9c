//! The command line.

use crate::{App, Config, build, invite, issue_token, seed_demo};
use anyhow::Context;
use clap::{Parser, Subcommand};
use poem::listener::{Acceptor, Listener, TcpListener};

/// Trove: the inventory of what you own, and what to build, sell or give away from it.
#[derive(Debug, Parser)]
#[command(name = "trove", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API and the web page on TROVE_BIND (default 127.0.0.1:8080).
    Serve {
        /// Seed the demo inventory into an empty store and print an invitation link for the demo household's
        /// owner.
        #[arg(long)]
        demo: bool,
    },
    /// Ask the server running on TROVE_BIND whether it is ready (`GET /health/ready`), for a container's health
    /// check where there is no curl: exit 0 when it answers 200, 1 otherwise, printing the answer.
    Health {
        /// Ask only whether it is up (`GET /health`).
        #[arg(long)]
        live: bool,
    },
    /// Run the database migrations and exit. A database migrated by a newer Trove is refused, unchanged.
    Migrate {
        /// List the migrations that would run, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Seed the demo inventory (about 40 items) into the default household, if it is empty.
    Demo,
    /// Import items from a CSV file: our own export or a Homebox CSV export. All or nothing: a bad row is
    /// reported with its line and nothing is written.
    Import {
        /// The CSV file.
        file: std::path::PathBuf,
        /// The household the items go to.
        #[arg(long, default_value = trove_application::auth::DEFAULT_HOUSEHOLD)]
        household: String,
        /// A directory of media written by `trove export --media`: each file (`ITEMID-MEDIAID.ext`) is attached
        /// to the item its row becomes; a file already on that item is not added twice.
        #[arg(long, value_name = "DIR")]
        media: Option<std::path::PathBuf>,
    },
    /// Export every item of a household as CSV.
    Export {
        /// Where to write (default: standard output).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// The household to export.
        #[arg(long, default_value = trove_application::auth::DEFAULT_HOUSEHOLD)]
        household: String,
        /// Also copy every item's media (photos, receipts, manuals) into this directory, named
        /// `ITEMID-MEDIAID.ext`, with `media.json` saying each one's kind and caption.
        #[arg(long, value_name = "DIR")]
        media: Option<std::path::PathBuf>,
    },
    /// Print a one-time invitation link (valid 7 days) into a household: how a household starts.
    Invite {
        /// The role the invited person gets: owner, member or viewer.
        #[arg(long, value_parser = ["owner", "member", "viewer"])]
        role: String,
        /// The household (created on first use).
        #[arg(long, default_value = trove_application::auth::DEFAULT_HOUSEHOLD)]
        household: String,
    },
    /// Write one archive of the whole store (every household's rows and every media file, with a manifest of
    /// counts and SHA-256s) from a consistent snapshot, while Trove runs; `backup verify FILE` checks one.
    Backup {
        #[command(subcommand)]
        command: Option<BackupCommand>,
        /// The archive to write (written to FILE.partial, then renamed).
        #[arg(long, value_name = "FILE", required = false)]
        out: Option<std::path::PathBuf>,
    },
    /// Restore an archive written by `trove backup` into an empty store, on SQLite or PostgreSQL (DATABASE_URL):
    /// the same ids, members, passwords, passkeys, history and media; every session ended. A tampered
    /// archive, one of another schema, or a store that is not empty is refused before anything is written.
    Restore {
        /// The archive.
        file: std::path::PathBuf,
    },
    /// Manage bearer tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// The model backend.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum BackupCommand {
    /// Check an archive against its manifest (every part's size, SHA-256 and rows) without restoring it.
    Verify {
        /// The archive.
        file: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Make the smallest call for each capability of the configured model backend (MODEL_PROVIDER) and print
    /// what works, what the provider refused and which setting to change. Every call is recorded in the spend
    /// ledger (well under one US cent at the default rates); exits non-zero when something the configuration
    /// needs does not work.
    Check,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Print a new write token of the household's first owner (the household and its owner are created on
    /// first use).
    New {
        /// The household the token belongs to.
        #[arg(long, default_value = trove_application::auth::DEFAULT_HOUSEHOLD)]
        household: String,
        /// What the token is for, as `GET /api/tokens` lists it.
        #[arg(long, alias = "member", default_value = "command line")]
        name: String,
    },
}

/// Runs a parsed command line with a configuration read from the environment.
///
/// # Errors
/// Whatever the command fails with.
pub async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    match cli.command {
        Command::Health { live } => {
            let path = if live { "/health" } else { "/health/ready" };
            let (status, body) = health_check(config.bind, path).await?;
            println!("{status} {body}");
            if status != 200 {
                anyhow::bail!("{path} answered {status}");
            }
        }
        Command::Migrate { dry_run: true } => {
            let store = trove_db::Store::connect(&config.database()).await.context("opening the database")?;
            let pending = store.pending_migrations().await?;
            if pending.is_empty() {
                println!("the schema is up to date: no migration would run");
            } else {
                println!("{} migration(s) would run:", pending.len());
                for name in pending {
                    println!("  {name}");
                }
            }
        }
        Command::Migrate { dry_run: false } => {
            build(&config).await?;
            println!("migrations applied");
        }
        Command::Demo => {
            let app = build(&config).await?;
            let n = seed_demo(&app).await?;
            if n == 0 {
                println!("the default household already has items; nothing seeded");
            } else {
                println!("seeded {n} demo items into the default household");
            }
        }
        Command::Import { file, household, media } => {
            let app = build(&config).await?;
            let (done, copied) =
                crate::exchange::import_with_media(&app, &file, &household, true, media.as_deref()).await?;
            println!(
                "imported {} rows ({} items) into household {household}; {} gone rows skipped",
                done.rows, done.items, done.skipped
            );
            if let Some(dir) = media {
                println!(
                    "attached {} media files ({} bytes) from {}; {} already there, {} of rows not imported",
                    copied.files,
                    copied.bytes,
                    dir.display(),
                    copied.present,
                    copied.skipped
                );
            }
        }
        Command::Export { out, household, media } => {
            let app = build(&config).await?;
            let (n, copied) =
                crate::exchange::export_with_media(&app, out.as_deref(), &household, media.as_deref()).await?;
            // With the sheet on standard output, the report goes to standard error.
            let report = |line: String| if out.is_some() { println!("{line}") } else { eprintln!("{line}") };
            if let Some(out) = &out {
                report(format!("exported {n} items of household {household} to {}", out.display()));
            }
            if let Some(dir) = media {
                report(format!("copied {} media files ({} bytes) to {}", copied.files, copied.bytes, dir.display()));
            }
        }
        Command::Backup { command: Some(BackupCommand::Verify { file }), .. } => {
            let m = trove_backup::verify(&file)?;
            println!(
                "{} is a whole backup: schema {}, made {} from {}, {} rows in {} tables, {} media files ({} bytes)",
                file.display(),
                m.schema,
                m.created_at.to_rfc3339(),
                m.backend,
                m.rows(),
                m.tables.len(),
                m.media.len(),
                m.media_bytes()
            );
        }
        Command::Backup { command: None, out } => {
            let out = out.context("trove backup needs --out FILE")?;
            let store = open_store(&config).await?;
            let blobs = config.media.open()?;
            let m = trove_backup::backup(&store, store.backend_name(), blobs.as_ref(), &out).await?;
            println!(
                "backed up {} rows in {} tables and {} media files ({} bytes) to {}",
                m.rows(),
                m.tables.len(),
                m.media.len(),
                m.media_bytes(),
                out.display()
            );
            if !m.missing_media.is_empty() {
                println!("{} media files named by their rows were missing from the media store", m.missing_media.len());
            }
        }
        Command::Restore { file } => {
            let store = open_store(&config).await?;
            let blobs = config.media.open()?;
            let r = trove_backup::restore(&store, blobs.as_ref(), &file).await?;
            println!(
                "restored {} rows in {} tables and {} media files from {} (made {} from {}) into {}; every session is ended",
                r.tables.iter().map(|(_, n)| n).sum::<u64>(),
                r.tables.len(),
                r.media,
                file.display(),
                r.manifest.created_at.to_rfc3339(),
                r.manifest.backend,
                store.backend_name()
            );
        }
        Command::Token { command: TokenCommand::New { household, name } } => {
            let app = build(&config).await?;
            println!("{}", issue_token(&app, &household, &name).await?);
        }
        Command::Invite { role, household } => {
            let app = build(&config).await?;
            let role = trove_domain::people::Role::parse(&role).context("--role must be owner, member or viewer")?;
            println!("{}", invite(&app, &household, role).await?);
        }
        Command::Model { command: ModelCommand::Check } => {
            let app = build(&config).await?;
            let check = crate::check::run(&app, &config).await?;
            print!("{}", check.render());
            if !check.passed() {
                anyhow::bail!("the model check failed");
            }
        }
        Command::Serve { demo } => {
            let app = build(&config).await?;
            let acceptor = TcpListener::bind(config.bind)
                .into_acceptor()
                .await
                .with_context(|| format!("listening on {} (TROVE_BIND)", config.bind))?;
            let addr = acceptor
                .local_addr()
                .first()
                .and_then(|a| a.as_socket_addr().copied())
                .context("the listener has no address")?;
            announce(&app, demo, addr).await?;
            let sweeper = tokio::spawn(crate::sweep_media(app.services.media.clone()));
            let backups =
                tokio::spawn(crate::scheduled_backups(app.services.backups.clone(), app.services.clock.clone()));
            let reminding = tokio::spawn(crate::send_reminders(app.services.reminders.clone()));
            let hearing = app.hear_access_changes();
            let served = trove_http::serve(acceptor, app.services, shutdown_signal()).await;
            sweeper.abort();
            backups.abort();
            reminding.abort();
            hearing.abort();
            served?;
        }
    }
    Ok(())
}

/// The store alone, migrated: what backups need (no catalogue seeded, no household made).
async fn open_store(config: &Config) -> anyhow::Result<trove_db::Store> {
    crate::data_dir::tighten(&config.data_dir).await;
    let store = trove_db::Store::connect(&config.database()).await.context("opening the database")?;
    store.migrate().await.context("migrating the database")?;
    Ok(store)
}

/// Prints where Trove listens and how to sign in.
async fn announce(app: &App, demo: bool, addr: std::net::SocketAddr) -> anyhow::Result<()> {
    println!("trove listening on http://{addr} (database: {}, model: {})", app.store.backend_name(), app.model_name);
    if demo {
        let n = seed_demo(app).await?;
        if n > 0 {
            println!("seeded {n} demo items");
        }
        let link = invite(app, trove_application::auth::DEFAULT_HOUSEHOLD, trove_domain::people::Role::Owner).await?;
        println!("sign up as the demo household's owner: {link}");
        println!("scripts: make a token on the page, or with trove token new");
    } else {
        println!("start a household with: trove invite --role owner");
    }
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { () = ctrl_c => {}, () = term => {} }
}

/// `GET path` of the server on `bind` (an unspecified address asked on loopback), within five seconds: its
/// status and body.
async fn health_check(bind: std::net::SocketAddr, path: &str) -> anyhow::Result<(u16, String)> {
    let mut addr = bind;
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let url = format!("http://{addr}{path}");
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5)).build()?;
    let answer = client.get(&url).send().await.with_context(|| format!("asking {url}"))?;
    let status = answer.status().as_u16();
    let body = answer.text().await.with_context(|| format!("reading the answer of {url}"))?;
    Ok((status, body.trim().to_owned()))
}
