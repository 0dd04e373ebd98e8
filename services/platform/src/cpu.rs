//! CPU-heavy request work (broad listings, searches) off the async
//! workers, at most one task per core at a time: the async workers stay
//! free for cheap requests, and a burst of heavy ones queues (without a
//! thread each) instead of thrashing the cores.

use std::sync::OnceLock;

use tokio::sync::Semaphore;

use crate::error::ServiceError;

fn permits() -> &'static Semaphore {
    static PERMITS: OnceLock<Semaphore> = OnceLock::new();
    PERMITS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        Semaphore::new(cores)
    })
}

/// Runs `work` on the calling task once a core is free: for work too
/// short to be worth handing to another thread, yet counted with the
/// pool's, so that short and long work together keep to one task per
/// core and take turns in arrival order (short work running beside the
/// pool's starved it: more busy threads than cores).
pub async fn run_here<T>(work: impl FnOnce() -> T) -> Result<T, ServiceError> {
    let _permit = permits()
        .acquire()
        .await
        .map_err(|e| ServiceError::internal(e.to_string()))?;
    Ok(work())
}

/// Runs `work` on the blocking pool once a core is free.
pub async fn run<T, F>(work: F) -> Result<T, ServiceError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _permit = permits()
        .acquire()
        .await
        .map_err(|e| ServiceError::internal(e.to_string()))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServiceError::internal(e.to_string()))
}

/// The allocator's delay before freed memory may go back to the system
/// (mimalloc's `purge_delay`), and a little more.
const PURGE_DELAY: std::time::Duration = std::time::Duration::from_millis(1100);

/// The priority of a build's threads that others wait on, and of every
/// build when the idle class is refused (Linux nice, the lowest: a thread
/// at 19 weighs 15 against 1,024 for one at 0 when both want a core).
const BUILD_NICE: i32 = 19;

/// How a build thread yields to requests.
#[derive(Clone, Copy)]
enum Yield {
    /// The idle scheduling class (`SCHED_IDLE`): a core only when no
    /// request thread wants it. Nice 19 alone was not enough: the scheduler
    /// lets a thread that got a core keep it for its slice (a few ms) before
    /// a waking request thread may take it, so on two cores an import under
    /// listing load still ran on most of one and listings kept 0.69-0.79x of
    /// their throughput; an idle-class thread gives way at the wakeup
    /// (docs/performance.md). Under a load that leaves no core idle it waits.
    Idle,
    /// Nice 19 only: a share of the cores however busy they are, for a
    /// build others wait on besides its caller: one holding the catalog
    /// writers' turn (a checkout's stock holds wait in it) or search's
    /// (its follow steps, a live change's way into search, wait in it),
    /// and the drop of a replaced whole catalog or index (its memory).
    Share,
}

/// Lowers the calling thread's priority for good (threads it starts
/// inherit it): in the idle class for `Yield::Idle` (at nice 19 should the
/// class be refused, as a seccomp profile may), at nice 19 for
/// `Yield::Share`.
fn yield_to_requests(how: Yield) {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy};
        if let Yield::Idle = how {
            let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
            let native = thread_priority::thread_native_id();
            if let Err(e) =
                thread_priority::set_thread_priority_and_policy(native, ThreadPriority::Min, idle)
            {
                tracing::debug!(error = %e, "a build thread stays in the normal class");
            }
        }
        let tid = Some(rustix::thread::gettid());
        if let Err(e) = rustix::process::setpriority_process(tid, BUILD_NICE) {
            tracing::debug!(error = %e, "a build thread keeps its priority");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = how;
}

/// Runs a one-off build that only its caller waits on (an import's read
/// and build, the start's catalog) on a thread of its own in the idle
/// class (`Yield::Idle`): under load it takes what requests leave, answers
/// do not slow (under a load that leaves no core idle it waits for one).
/// The thread ends a purge delay after the build. The allocator
/// hands freed memory back to the system only at a collection at least a
/// purge delay after the free; an idle process makes none until a thread
/// ends, and a blocking-pool thread idles 10 s first: the build's garbage
/// (about 120 MB at 100,000 products) stayed resident that long.
/// The thread starts at once, not when the answer is first awaited.
pub fn run_once<T, F>(name: &str, work: F) -> impl Future<Output = Result<T, ServiceError>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    build_thread(name, Yield::Idle, work)
}

/// As `run_once`, for a build others wait on (`Yield::Share`: the catalog
/// writers' or search's turn held through it): at nice 19, so that it
/// keeps a share of the cores under any load.
pub fn run_once_waited_on<T, F>(
    name: &str,
    work: F,
) -> impl Future<Output = Result<T, ServiceError>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    build_thread(name, Yield::Share, work)
}

fn build_thread<T, F>(
    name: &str,
    how: Yield,
    work: F,
) -> impl Future<Output = Result<T, ServiceError>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (done, result) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            yield_to_requests(how);
            let _ = done.send(work());
            // mimalloc returns freed memory to the system at its next
            // collection once a purge delay (1 s) has passed; a thread's
            // end is such a collection, and an idle process has no other.
            std::thread::sleep(PURGE_DELAY);
        });
    let name = name.to_string();
    async move {
        started.map_err(|e| ServiceError::internal(e.to_string()))?;
        result
            .await
            .map_err(|_| ServiceError::internal(format!("{name} stopped without a result")))
    }
}

/// Drops `value` on a thread of its own at build priority. The last
/// reference to a whole catalog or search index frees hundreds of
/// thousands of allocations (tens of milliseconds at 100,000 products);
/// dropped where it was replaced, that time went to a request thread, and
/// under the lock readers wait on.
pub fn drop_off_requests<T: Send + 'static>(value: T) {
    // The thread starts at once; nobody waits for it, but until it ends
    // the process holds two catalogs: it keeps a share of the cores.
    drop(run_once_waited_on("drop", move || drop(value)));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Work on the calling task and on the pool shares one permit per
    /// core: never more of both at once than there are cores.
    #[tokio::test(flavor = "multi_thread", worker_threads = 8)]
    async fn short_and_long_work_together_keep_to_one_task_per_core() {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let work = {
            let (running, most) = (running.clone(), most.clone());
            move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
            }
        };
        let tasks: Vec<_> = (0..4 * cores)
            .map(|i| {
                let work = work.clone();
                tokio::spawn(async move {
                    if i % 2 == 0 {
                        super::run_here(work).await.unwrap();
                    } else {
                        super::run(work).await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= cores, "{most:?}");
        assert!(most.load(Ordering::SeqCst) >= 1);
    }

    #[tokio::test]
    async fn a_one_off_build_answers_and_its_thread_ends() {
        let (value, thread) = super::run_once("build", || (6 * 7, std::thread::current().id()))
            .await
            .unwrap();
        assert_eq!(value, 42);
        assert_ne!(thread, std::thread::current().id());
        // Started before it is awaited: a build fed by its caller (the search
        // index from the catalog's stream) must not wait for the await.
        let (started, running) = std::sync::mpsc::channel();
        let build = super::run_once("eager", move || started.send(()).is_ok());
        running
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the build ran before its answer was awaited");
        assert!(build.await.unwrap());
        #[cfg(target_os = "linux")]
        {
            let nice = || rustix::process::getpriority_process(Some(rustix::thread::gettid()));
            let before = nice().unwrap();
            let build = super::run_once("yielding", move || nice().unwrap())
                .await
                .unwrap();
            assert_eq!(
                build,
                (before + super::BUILD_NICE).min(19),
                "a build yields to requests"
            );
            // The lowest priority there is: at 10 an import under load still
            // took most of a core (docs/performance.md).
            assert_eq!(build, 19, "a build runs at the lowest priority");
            assert_eq!(nice().unwrap(), before, "the caller keeps its priority");
            let class = || thread_priority::thread_schedule_policy().unwrap();
            let normal = class();
            let built = super::run_once("idle", class).await.unwrap();
            let idle = thread_priority::ThreadSchedulePolicy::Normal(
                thread_priority::NormalThreadSchedulePolicy::Idle,
            );
            // Where the class is refused (a seccomp profile), nice 19 above
            // is what a build gets: a scratch thread asks first.
            let allowed = std::thread::spawn(move || {
                let native = thread_priority::thread_native_id();
                let min = thread_priority::ThreadPriority::Min;
                thread_priority::set_thread_priority_and_policy(native, min, idle).is_ok()
            });
            if allowed.join().unwrap() {
                assert_eq!(built, idle, "a build gives way to requests at their wakeup");
            }
            assert_eq!(class(), normal, "the caller keeps its class");
            let waited_on =
                super::run_once_waited_on("waited-on", move || (class(), nice().unwrap()));
            assert_eq!(
                waited_on.await.unwrap(),
                (normal, 19),
                "a build requests wait on keeps a share of the cores"
            );
        }
        let failed = super::run_once("broken", || -> u8 { panic!("broken build") }).await;
        assert!(failed.unwrap_err().to_string().contains("broken"));
    }

    /// Where and at what priority a value was dropped.
    struct Noted(std::sync::mpsc::Sender<(std::thread::ThreadId, Option<i32>)>);

    fn nice() -> Option<i32> {
        #[cfg(target_os = "linux")]
        return rustix::process::getpriority_process(Some(rustix::thread::gettid())).ok();
        #[cfg(not(target_os = "linux"))]
        None
    }

    impl Drop for Noted {
        fn drop(&mut self) {
            let _ = self.0.send((std::thread::current().id(), nice()));
        }
    }

    #[test]
    fn a_replaced_value_is_dropped_off_the_calling_thread_at_build_priority() {
        let (noted, dropped) = std::sync::mpsc::channel();
        super::drop_off_requests(Noted(noted));
        let (thread, priority) = dropped
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the value was dropped");
        assert_ne!(thread, std::thread::current().id());
        if let Some(before) = nice() {
            assert_eq!(priority, Some((before + super::BUILD_NICE).min(19)));
        }
    }
}
