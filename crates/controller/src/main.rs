//! The `celld-operator` binary: flags, logging, the health server, and the operator.

use celld_operator::args::{Args, LogFormat};
use celld_operator::cache::health::WatchHealth;
use celld_operator::cache::heap_release;
use celld_operator::metrics::Metrics;
use celld_operator::runtime::endpoints::{self, Endpoints};
use celld_operator::runtime::run::{RunError, run_watched};
use celld_operator::runtime::server::Health;
use clap::Parser;
use std::cell::Cell;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

/// mimalloc rather than the C library's allocator: the same allocator on glibc and on the
/// release image's musl (whose own allocator is slow), and less memory held per object cached.
/// It is built without transparent huge pages (the `no_thp` feature): with them a small heap is
/// backed by 2 MiB pages, and the empty operator took 26 MiB instead of 16.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = tokio::signal::ctrl_c() => {},
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    info!("shutdown requested");
}

/// Has mimalloc collect the calling thread's heap: blocks other threads freed are taken back
/// and pages left empty go back to the system. mimalloc does this only when a thread allocates
/// again, and after fleets are deleted the runtime's threads mostly wait: without it the
/// operator kept twice its empty size after creating and deleting 300 fleets.
#[expect(unsafe_code, reason = "the one call into mimalloc's C API")]
fn collect_heap() {
    // SAFETY: mi_collect takes no pointer and may be called on any thread at any time; it only
    // works on the calling thread's heap.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// [`collect_heap`] when the calling runtime thread parks and a release was asked
/// ([`heap_release`]) since this thread last collected.
fn collect_when_asked() {
    thread_local! {
        static SEEN: Cell<u64> = const { Cell::new(0) };
    }
    let asked = heap_release::asked();
    SEEN.with(|seen| {
        if seen.get() != asked {
            seen.set(asked);
            collect_heap();
        }
    });
}

fn main() -> ExitCode {
    let args = Args::parse();
    celld_api::contract::deployer::pin_digests(args.deployer_digests.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(usize::from(args.worker_threads))
        .enable_all()
        .on_thread_park(collect_when_asked)
        .build();
    match runtime {
        // On a runtime thread rather than this one: the controller's wake-ups (a reconcile
        // done, a watch event) then stay on the runtime's threads instead of crossing to a
        // thread of its own each time.
        Ok(runtime) => runtime.block_on(async {
            tokio::spawn(operator(args)).await.unwrap_or_else(|e| {
                eprintln!("celld-operator: the operator task ended abnormally: {e}");
                ExitCode::FAILURE
            })
        }),
        Err(e) => {
            eprintln!("celld-operator: starting the async runtime failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn operator(args: Args) -> ExitCode {
    let filter = EnvFilter::try_new(&args.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter);
    match args.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }

    let client = match kube::Client::try_default().await {
        Ok(client) => client,
        Err(e) => {
            error!(error = %e, "no Kubernetes configuration: run in a pod or set KUBECONFIG");
            return ExitCode::FAILURE;
        }
    };
    let metrics = Arc::new(Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));
    let watches = Arc::new(WatchHealth::new(args.watch_settings(), metrics.clone()));
    let health = Health {
        metrics: metrics.clone(),
        ready: ready.clone(),
        watches: watches.clone(),
    };
    let endpoints = Endpoints {
        plain: args.metrics_addr,
        secure_metrics: args.metrics_secure.then_some(args.secure_metrics_addr),
    };
    let reviews = client.clone();
    tokio::spawn(async move {
        if let Err(e) = endpoints::serve(endpoints, health, reviews).await {
            error!(error = %e, "the health and metrics endpoints stopped");
        }
    });

    match run_watched(
        client,
        args.settings(),
        args.leader(),
        metrics,
        ready,
        watches,
        shutdown_signal(),
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ RunError::LostLeadership) => {
            error!(error = %e);
            ExitCode::from(2)
        }
        Err(e) => {
            error!(error = %e);
            ExitCode::FAILURE
        }
    }
}
