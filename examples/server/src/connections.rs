//! Connections: HTTP/1.1 on hyper with the limits of SPEC section 3 ("Connections").
//!
//! `axum::serve` sets no timer, so hyper's header-read timeout never runs and a client that
//! sends half a request (or nothing) keeps its socket, its task and up to ~400 KiB of read
//! buffer for as long as it likes. Here each connection is driven by hyper's HTTP/1 builder
//! directly, with:
//!
//! - **a header timeout** ([`HEADER_TIMEOUT`], 10 s): hyper's `header_read_timeout`. On a new
//!   connection it runs from the accept; on a kept-alive one, from the first byte of the next
//!   request. A late head is answered by closing the connection.
//! - **a header cap** ([`MAX_HEADER_BYTES`], 32 KiB): hyper's `max_header_size`, counting the
//!   request line, the header lines and the blank line. hyper answers a longer head, or one
//!   still unfinished at the cap, with `431 Request Header Fields Too Large` and closes. That
//!   answer, and hyper's 400 to a malformed head, are written before any route runs and have
//!   no body: hyper has no hook to give them the `{"message","code"}` one, and a cap raised
//!   for a middleware to answer could not stay exact (docs/DESIGN.md, "Connections").
//! - **an idle timeout** ([`IDLE_TIMEOUT`], 60 s) between requests on a kept-alive connection.
//!   hyper starts its header timer as soon as a response is written, so on its own it would
//!   close an idle connection after 10 s. The timer handed to hyper ([`HeadTimer`]) is one per
//!   connection and knows how many bytes the socket has delivered: until the next request's
//!   first byte it allows the idle timeout, from that byte the header timeout.
//! - **a cap on open connections** (`max_connections`): a slot of a semaphore is taken before
//!   `accept`, so at the cap new connections wait in the kernel's listen backlog instead of
//!   being accepted and dropped (docs/DESIGN.md, "Connections").
//!
//! None of this touches a request once its head has arrived: handlers, bodies and responses
//! run as before. Shutdown is graceful: the listener closes, idle connections close at once,
//! the others after their response (or their header timeout).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::rt::{Sleep, Timer};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Time a request head may take: from the accept on a new connection, from its first byte on a
/// kept-alive one.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest request head, in bytes: request line, header lines and the blank line.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Time a kept-alive connection may wait for its next request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Time a request body (at most 64 KiB) may take once its head has arrived.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The body timeout of a request's connection, carried as a request extension for the body
/// reader ([`crate::input`]).
#[derive(Clone, Copy, Debug)]
pub struct BodyTimeout(pub Duration);

/// File descriptors left for everything but client connections (stdio, the listener, tokio's
/// own, the SQLite files of every reader and the writer), on top of four per core.
const RESERVED_FDS: u64 = 64;

/// The default cap never goes above this: past it, memory (up to ~64 KiB for a connection
/// holding an unfinished head) matters more than descriptors.
const MAX_DEFAULT_CONNECTIONS: u64 = 65_536;

/// Pause after an accept error that is not about one connection (such as running out of file
/// descriptors), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// At most one "connection cap reached" warning per this long.
const CAP_WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// The listen backlog [`listen`] asks for. Linux caps it at `net.core.somaxconn` (4096 by
/// default since 5.4). tokio's `TcpListener::bind` asks for 128, as the standard library does: a
/// burst of a few hundred connections at once (clients reconnecting together after a restart or
/// a network blip) then overflows the queue, the kernel answers with SYN cookies and drops the
/// handshakes it has no room for, and a client that waits for the server to speak first is left
/// with a connection that exists on its side only.
pub const LISTEN_BACKLOG: u32 = 4096;

/// Bind `address` (a host and port, names resolved, the first address that binds wins) and
/// listen with a backlog of [`LISTEN_BACKLOG`], `SO_REUSEADDR` set as tokio sets it.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let listener = rampart_server::listen("127.0.0.1:8080").await?;
/// # Ok(()) }
/// ```
pub async fn listen(address: &str) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(address).await? {
        let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(addr).and_then(|()| socket.listen(LISTEN_BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to listen on")))
}

/// The connection limits of SPEC section 3; [`Default`] gives the specified values.
///
/// ```
/// let mut limits = rampart_server::ConnectionLimits::default();
/// limits.max_connections = 512;
/// assert_eq!(limits.header_timeout.as_secs(), 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Time a request head may take ([`HEADER_TIMEOUT`]).
    pub header_timeout: Duration,
    /// The largest request head in bytes ([`MAX_HEADER_BYTES`]); beyond it, 431.
    pub max_header_bytes: usize,
    /// Time a kept-alive connection may wait for its next request ([`IDLE_TIMEOUT`]).
    pub idle_timeout: Duration,
    /// Time a request body may take once the head has arrived ([`BODY_TIMEOUT`]); beyond it the
    /// request is answered 400 and the connection closed.
    pub body_timeout: Duration,
    /// Connections open at once; more wait in the listen backlog
    /// ([`default_max_connections`]).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: HEADER_TIMEOUT,
            max_header_bytes: MAX_HEADER_BYTES,
            idle_timeout: IDLE_TIMEOUT,
            body_timeout: BODY_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// The default cap on open connections: the process's soft limit on open files
/// (`RLIMIT_NOFILE`, `ulimit -n`) less a reserve of 64 plus 4 per core, at least 16 and at most
/// 65 536. So `ulimit -n 1024` on two cores gives 952. Where the limit cannot be read, 1024 is
/// assumed.
pub fn default_max_connections() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let reserve = RESERVED_FDS + 4 * cores;
    let cap = open_files_limit().unwrap_or(1024).saturating_sub(reserve).clamp(16, MAX_DEFAULT_CONNECTIONS);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

#[cfg(unix)]
fn open_files_limit() -> Option<u64> {
    // `None` is "unlimited": the upper clamp applies.
    Some(rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(u64::MAX))
}

#[cfg(not(unix))]
fn open_files_limit() -> Option<u64> {
    None
}

/// Serve `app` on `listener` under `limits` until `shutdown` completes; then stop accepting,
/// close idle connections and let requests in flight finish.
///
/// ```no_run
/// # async fn run(app: axum::Router) -> std::io::Result<()> {
/// let listener = rampart_server::listen("127.0.0.1:8080").await?;
/// let mut limits = rampart_server::ConnectionLimits::default();
/// limits.max_connections = 256;
/// rampart_server::serve_with(listener, app, limits, rampart_server::shutdown_signal()).await
/// # }
/// ```
pub async fn serve_with(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let mut http = http1::Builder::new();
    http.header_read_timeout(limits.header_timeout).max_header_size(limits.max_header_bytes);
    let slots = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let graceful = GracefulShutdown::new();
    let mut last_cap_warning: Option<Instant> = None;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if last_cap_warning.is_none_or(|at| at.elapsed() >= CAP_WARNING_INTERVAL) {
                    last_cap_warning = Some(Instant::now());
                    tracing::warn!(
                        target: "rampart::http",
                        max_connections = limits.max_connections,
                        "connection cap reached; new connections wait in the listen backlog"
                    );
                }
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                }
            }
        };
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => spawn_connection(stream, peer, slot, &http, &limits, &app, &graceful),
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                tracing::error!(target: "rampart::http", error = %e, "accept failed; retrying");
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
        }
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Errors about one connection that went away before it was accepted: try the next one.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

fn spawn_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    slot: OwnedSemaphorePermit,
    http: &http1::Builder,
    limits: &ConnectionLimits,
    app: &Router,
    graceful: &GracefulShutdown,
) {
    // hyper writes each response whole; no reason to hold a small one back.
    let _ = stream.set_nodelay(true);
    let bytes_read = Arc::new(AtomicU64::new(0));
    let io = TokioIo::new(CountingStream { inner: stream, bytes_read: bytes_read.clone() });
    let mut http = http.clone();
    http.timer(HeadTimer {
        bytes_read,
        first_head: AtomicBool::new(true),
        header_timeout: limits.header_timeout,
        idle_timeout: limits.idle_timeout,
    });
    let body_timeout = BodyTimeout(limits.body_timeout);
    // Each request carries the client's address (`ConnectInfo`), as `axum::serve` would give
    // it, and the body timeout.
    let app =
        tower::ServiceExt::map_request(app.clone(), move |mut req: axum::http::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            req.extensions_mut().insert(body_timeout);
            req
        });
    let conn = graceful.watch(http.serve_connection(io, TowerToHyperService::new(app)));
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            // A late or oversized head, a reset: the client's doing, not the server's.
            tracing::debug!(target: "rampart::http", error = %e, "connection closed");
        }
        drop(slot);
    });
}

/// The socket, counting the bytes it delivers, so [`HeadTimer`] can tell a connection waiting
/// for a request from one receiving a request head.
struct CountingStream {
    inner: TcpStream,
    bytes_read: Arc<AtomicU64>,
}

impl AsyncRead for CountingStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        if read > 0 {
            self.bytes_read.fetch_add(read as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for CountingStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// One connection's timer for hyper. An HTTP/1 server connection asks its timer for exactly one
/// thing: a deadline each time it starts waiting for a request head (at the start, then after
/// every response on a kept-alive connection), dropped once the head is parsed. The first wait
/// gets hyper's deadline (the header timeout from the accept); a later one gets the idle
/// timeout, then the header timeout from the moment the socket delivers a byte.
///
/// A byte read before hyper asks (the start of a pipelined request sent with the previous one)
/// is not seen, so such a head is held to the idle timeout instead: still bounded.
struct HeadTimer {
    bytes_read: Arc<AtomicU64>,
    first_head: AtomicBool,
    header_timeout: Duration,
    idle_timeout: Duration,
}

impl Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(HeadSleep { sleep: Box::pin(tokio::time::sleep(duration)), idle: None })
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn Sleep>> {
        if self.first_head.swap(false, Ordering::Relaxed) {
            let sleep = tokio::time::sleep_until(Instant::from_std(deadline));
            return Box::pin(HeadSleep { sleep: Box::pin(sleep), idle: None });
        }
        let idle = Idle {
            bytes_read: self.bytes_read.clone(),
            bytes_at_start: self.bytes_read.load(Ordering::Relaxed),
            header_timeout: self.header_timeout,
        };
        Box::pin(HeadSleep { sleep: Box::pin(tokio::time::sleep(self.idle_timeout)), idle: Some(idle) })
    }

    fn now(&self) -> std::time::Instant {
        Instant::now().into_std()
    }
}

/// A wait for a request head; see [`HeadTimer`].
struct HeadSleep {
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// Set while no byte of the awaited request has arrived.
    idle: Option<Idle>,
}

struct Idle {
    bytes_read: Arc<AtomicU64>,
    bytes_at_start: u64,
    header_timeout: Duration,
}

impl Future for HeadSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // hyper polls this after every read that leaves the head unfinished, so the switch
        // happens within the poll that read the request's first bytes.
        if let Some(idle) = &self.idle
            && idle.bytes_read.load(Ordering::Relaxed) != idle.bytes_at_start
        {
            let deadline = Instant::now() + idle.header_timeout;
            self.idle = None;
            self.sleep.as_mut().reset(deadline);
        }
        self.sleep.as_mut().poll(cx)
    }
}

impl Sleep for HeadSleep {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_specified_limits() {
        let limits = ConnectionLimits::default();
        assert_eq!(limits.header_timeout, Duration::from_secs(10));
        assert_eq!(limits.max_header_bytes, 32 * 1024);
        assert_eq!(limits.idle_timeout, Duration::from_secs(60));
        assert_eq!(limits.max_connections, default_max_connections());
        assert!((16..=65_536).contains(&limits.max_connections));
    }

    #[cfg(unix)]
    #[test]
    fn default_cap_follows_the_open_files_limit() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
        let expected = match rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
            Some(soft) => soft.saturating_sub(64 + 4 * cores).clamp(16, 65_536),
            None => 65_536,
        };
        assert_eq!(default_max_connections() as u64, expected);
    }

    /// The idle allowance turns into the header timeout once a byte arrives.
    #[tokio::test(start_paused = true)]
    async fn idle_wait_becomes_a_header_wait_at_the_first_byte() {
        let bytes_read = Arc::new(AtomicU64::new(0));
        let timer = HeadTimer {
            bytes_read: bytes_read.clone(),
            first_head: AtomicBool::new(true),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        };
        // The first head: hyper's own deadline.
        let start = Instant::now();
        timer.sleep_until(timer.now() + Duration::from_secs(10)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        // A kept-alive connection with no byte: the idle timeout.
        let start = Instant::now();
        timer.sleep_until(timer.now() + Duration::from_secs(10)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(60));
        // A byte after 30 s of idling: 10 s from then.
        let start = Instant::now();
        let mut wait = timer.sleep_until(timer.now() + Duration::from_secs(10));
        assert!(tokio::time::timeout(Duration::from_secs(30), &mut wait).await.is_err());
        bytes_read.fetch_add(1, Ordering::Relaxed);
        // The wait is polled after the read (as hyper does) and times out 10 s later.
        wait.await;
        assert_eq!(start.elapsed(), Duration::from_secs(40));
    }
}
