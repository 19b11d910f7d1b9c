//! Two `trove serve` processes on one PostgreSQL database accept two projects that share an item at the same
//! moment, many times over: exactly one accept wins each time, and no item is ever reserved by two projects.
//!
//! The fixtures are written in-process through the ports (the same store the processes open), the accepts go
//! over HTTP, one to each process, and the outcome is read back through the ports.

use reqwest::StatusCode;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trove_application::ports::{HouseholdRepo, InventoryRepo, ProjectRepo, TemplateRepo};
use trove_db::Store;
use trove_domain::item::{Availability, Condition, Intent, ItemName, ItemType, NewItem};
use trove_domain::project::{Allocation, NewProject, Project, ProjectStatus};
use trove_domain::{HouseholdId, ItemId, ProjectId};

/// How many times the two accepts race.
const ROUNDS: usize = 25;
/// How long a process may take to start and answer `/health`: generous, the machine is shared.
const START_DEADLINE: Duration = Duration::from_secs(60);

/// A `trove serve` child process, killed and reaped when dropped, also when the test panics.
struct ServeProcess {
    /// The process, killed on drop.
    child: Child,
    /// `http://ADDR` as the process announced it.
    base: String,
}

impl ServeProcess {
    /// Starts `trove serve` on `database_url`, on a port the system picks, and waits (with a deadline) for the
    /// address it announces on stdout.
    async fn start(database_url: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_trove"))
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("TROVE_BIND", "127.0.0.1:0")
            .env("RUST_LOG", "warn")
            .env_remove("MODEL_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("trove serve starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        // Reads the announcement, then keeps draining stdout so the process never blocks on a full pipe; the
        // thread ends when the process does.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("trove listening on ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                }
            }
        });
        // The guard exists before anything below may panic, so the process is killed then too.
        let mut process = ServeProcess { child, base: String::new() };
        process.base = tokio::time::timeout(START_DEADLINE, rx)
            .await
            .expect("trove serve announces its address in time")
            .expect("trove serve announces its address before exiting");
        assert!(process.base.starts_with("http://127.0.0.1:"), "{}", process.base);
        process
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Polls `/health` until it answers 200, failing after [`START_DEADLINE`].
    async fn wait_healthy(&self, client: &reqwest::Client) {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            match client.get(self.url("/health")).send().await {
                Ok(r) if r.status() == StatusCode::OK => return,
                other => assert!(Instant::now() < deadline, "{} is not healthy in time: {other:?}", self.base),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One race: two proposed projects that share `shared`, each with an item of its own too.
struct Round {
    projects: [ProjectId; 2],
    shared: ItemId,
    own: [ItemId; 2],
}

fn board(name: &str) -> NewItem {
    NewItem::new(
        ItemName::new(name).unwrap(),
        ItemType::new("single_board_computer").unwrap(),
        "BCM2711, 4GB RAM".into(),
        Condition::Good,
        Intent::Keep,
    )
}

/// Writes the items and the two projects of each round through the ports.
async fn write_rounds(store: &Arc<Store>, household: HouseholdId) -> Vec<Round> {
    let items: Arc<dyn InventoryRepo> = store.clone();
    let projects: Arc<dyn ProjectRepo> = store.clone();
    let templates: Arc<dyn TemplateRepo> = store.clone();
    let template = templates.list(household).await.unwrap().into_iter().next().expect("a seeded template");
    let key = template.requirements[0].key.to_string();
    let at = &trove_domain::history::Recording::new(chrono::Utc::now(), None, trove_domain::history::Action::Create);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for r in 0..ROUNDS {
        let shared = items.insert(household, board(&format!("Shared Pi {r}")), at).await.unwrap().id;
        let own = [
            items.insert(household, board(&format!("Left Pi {r}")), at).await.unwrap().id,
            items.insert(household, board(&format!("Right Pi {r}")), at).await.unwrap().id,
        ];
        let new = |side: usize| NewProject {
            template_id: template.id,
            title: format!("Round {r} side {side}"),
            reason: "races for the shared board".into(),
            allocations: vec![
                Allocation { requirement: key.clone(), item_id: shared, units: 1 },
                Allocation { requirement: format!("{key}_spare"), item_id: own[side], units: 1 },
            ],
            missing: Vec::new(),
        };
        let written = projects.insert_many(household, vec![new(0), new(1)], at).await.unwrap();
        assert_eq!(written.len(), 2);
        rounds.push(Round { projects: [written[0].id, written[1].id], shared, own });
    }
    rounds
}

/// Accepts `project` through `process`; answers the status and the body.
async fn accept(
    client: &reqwest::Client,
    process: &ServeProcess,
    token: &str,
    project: ProjectId,
) -> (StatusCode, Value) {
    let resp = client
        .post(process.url(&format!("/api/projects/{project}/accept")))
        .bearer_auth(token)
        .send()
        .await
        .expect("the process answers");
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_accepting_projects_that_share_an_item_never_both_win() {
    let database_url = trove_db::testing::fresh_postgres_url().await.expect("a fresh postgresql database");
    let vars: HashMap<&str, String> = HashMap::from([("DATABASE_URL", database_url.clone())]);
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).expect("config");
    let app = trove::build(&config).await.expect("the app builds and migrates the database");
    let token = trove::issue_token(&app, "default", "racer").await.unwrap();
    let households: Arc<dyn HouseholdRepo> = app.store.clone();
    let household = households.ensure_household("default").await.unwrap();
    let rounds = write_rounds(&app.store, household).await;

    let processes = [ServeProcess::start(&database_url).await, ServeProcess::start(&database_url).await];
    let client = reqwest::Client::new();
    for p in &processes {
        p.wait_healthy(&client).await;
    }

    let mut winners = Vec::with_capacity(ROUNDS);
    let mut lost_in_the_store = 0;
    for (r, round) in rounds.iter().enumerate() {
        // Each side goes through its own process; which process gets which project alternates by round.
        let (a, b) = if r % 2 == 0 { (&processes[0], &processes[1]) } else { (&processes[1], &processes[0]) };
        let (left, right) =
            tokio::join!(accept(&client, a, &token, round.projects[0]), accept(&client, b, &token, round.projects[1]));
        let winner = match (left.0, right.0) {
            (StatusCode::OK, StatusCode::CONFLICT) => 0,
            (StatusCode::CONFLICT, StatusCode::OK) => 1,
            _ => {
                panic!("round {r}: expected one 200 and one 409, got {} {} and {} {}", left.0, left.1, right.0, right.1)
            }
        };
        let (won, lost) = if winner == 0 { (&left.1, &right.1) } else { (&right.1, &left.1) };
        assert_eq!(won["status"], "accepted", "round {r}: {won}");
        assert_eq!(lost["error"]["code"], "conflict", "round {r}: {lost}");
        // Named as the household calls it; a loser that lost in the store's conditional update reads the items
        // again and is refused by the rules on what it finds (reserved by the winner), or told the item changed.
        let message = lost["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("\"Shared Pi {r}\" is no longer buildable (reserved by project "))
                || message.contains(&format!("item {} is no longer buildable (it changed while", round.shared)),
            "round {r}: the conflict names the shared item: {lost}"
        );
        // Informative only.
        if message.contains("changed while") {
            lost_in_the_store += 1;
        }
        winners.push(winner);
    }
    println!("{ROUNDS} rounds: {lost_in_the_store} losers passed the rules' check and lost in the conditional update");

    // Read back through the ports, after every race.
    let items: Arc<dyn InventoryRepo> = app.store.clone();
    let projects: Arc<dyn ProjectRepo> = app.store.clone();
    for (r, (round, &winner)) in rounds.iter().zip(&winners).enumerate() {
        let (won, lost) = (round.projects[winner], round.projects[1 - winner]);
        assert_eq!(projects.get(household, won).await.unwrap().status, ProjectStatus::Accepted, "round {r}");
        assert_eq!(projects.get(household, lost).await.unwrap().status, ProjectStatus::Proposed, "round {r}");
        for id in [round.shared, round.own[winner]] {
            let item = items.get(household, id).await.unwrap();
            assert_eq!((item.availability, item.project), (Availability::Reserved, Some(won)), "round {r}, item {id}");
        }
        // The loser reserved nothing, not even its own item: the accept is all or nothing.
        let own = items.get(household, round.own[1 - winner]).await.unwrap();
        assert_eq!((own.availability, own.project), (Availability::Available, None), "round {r}");
    }
    let accepted: Vec<Project> =
        projects.list(household).await.unwrap().into_iter().filter(|p| p.status == ProjectStatus::Accepted).collect();
    assert_eq!(accepted.len(), ROUNDS, "one accepted project per round");
    let mut holder: HashMap<ItemId, ProjectId> = HashMap::new();
    for p in &accepted {
        for a in &p.allocations {
            if let Some(other) = holder.insert(a.item_id, p.id) {
                panic!("item {} is reserved by projects {other} and {}", a.item_id, p.id);
            }
            let item = items.get(household, a.item_id).await.unwrap();
            assert_eq!(item.project, Some(p.id), "item {} is held by the project that reserved it", a.item_id);
        }
    }

    drop(processes);
    drop(app);
    trove_db::testing::discard(&database_url).await.expect("the test database is dropped");
}

/// `trove serve` runs with glibc's arenas bounded (`MALLOC_ARENA_MAX=2`, set by the server itself when it starts),
/// so what a long-lived server keeps of freed memory stays bounded; an operator's own setting wins.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test]
async fn the_server_bounds_its_allocator_arenas() {
    let database_url = trove_db::testing::fresh_sqlite_url();
    let process = ServeProcess::start(&database_url).await;
    let environ = std::fs::read(format!("/proc/{}/environ", process.child.id())).unwrap();
    let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
    assert!(vars.contains(&&b"MALLOC_ARENA_MAX=2"[..]), "the server's environment has no MALLOC_ARENA_MAX=2");
    // The same process answers (it replaced itself; it did not start another).
    let health = reqwest::get(format!("{}/health", process.base)).await.unwrap();
    assert_eq!(health.status(), 200);
}
