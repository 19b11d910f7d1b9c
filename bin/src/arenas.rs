//! glibc's allocator gives a thread that allocates while another holds its arena an arena of its own (up to eight
//! per core) and keeps in each what was freed there. In a long-lived server the blocking threads that decode
//! pictures and hash passwords take turns, each filling and freeing its own arena, so the process keeps the sum:
//! several times what any one phase of worst-case pictures peaks at alone (docs/perf/segmentation.md). Two
//! arenas bound that near the largest phase's peak. The setting is read by glibc once, when the process
//! starts, so `trove serve` starts itself again with `MALLOC_ARENA_MAX` set, unless it is set already (an operator's
//! choice wins). Elsewhere than on glibc, nothing is done.

/// Arenas a server process uses.
pub const ARENAS: &str = "2";

/// Replaces this process by itself with `MALLOC_ARENA_MAX` set (the same arguments, the same process id), when
/// it runs on glibc and the setting is missing. Returns only when nothing was to be done or the restart failed
/// (said on standard error: the server then runs with glibc's default).
pub fn bound() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt as _;
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else { return };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        let failed = command.args(args).env("MALLOC_ARENA_MAX", ARENAS).exec();
        eprintln!(
            "warning: could not restart with MALLOC_ARENA_MAX={ARENAS} ({failed}); glibc's default arenas are used"
        );
    }
}
