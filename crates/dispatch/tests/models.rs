//! Every dispatch model serves the protocol on loopback under load, shuts
//! down on request, and survives a client that speaks something else.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use tcpwise_dispatch::load::{LoadOptions, run};
use tcpwise_dispatch::server::{ServerOptions, serve};
use tcpwise_dispatch::{Model, Workload};

fn start(
    model: Model,
) -> (
    SocketAddr,
    tcpwise_outcome::Shutdown,
    std::thread::JoinHandle<Vec<u64>>,
) {
    let stop = tcpwise_outcome::Shutdown::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        let opts = ServerOptions {
            bind: "127.0.0.1:0".parse().unwrap(),
            model,
            workers: 2,
        };
        serve(&opts, s, |a| tx.send(a).unwrap()).unwrap().per_worker
    });
    (rx.recv().unwrap(), stop, h)
}

#[test]
fn every_model_serves_a_closed_loop_load_and_stops() {
    for model in [
        Model::Shared,
        Model::Segments { slots: 64 },
        Model::Segments { slots: 2 },
        Model::Tokio,
    ] {
        let (addr, stop, h) = start(model);
        // A client speaking another protocol is dropped, not fatal.
        let mut junk = TcpStream::connect(addr).unwrap();
        junk.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        junk.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(
            junk.read(&mut buf).unwrap_or(0),
            0,
            "{model:?} answered junk"
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // More clients than slots: every one must still get served.
        let rep = rt
            .block_on(run(&LoadOptions {
                target: addr,
                clients: 12,
                duration: Duration::from_millis(400),
                warmup: Duration::from_millis(100),
                workload: Workload {
                    base_us: 20,
                    long_fraction: 0.05,
                    long_us: 500,
                    reply_bytes: 3000,
                },
                seed: 3,
            }))
            .unwrap();
        assert_eq!(rep.errors, 0, "{model:?}");
        assert!(rep.requests > 12, "{model:?}: {rep:?}");
        assert!(rep.p50_us <= rep.p99_us && rep.p99_us <= rep.max_us);
        assert!(rep.min_rtt_us.is_some());
        stop.trigger();
        let per_worker = h.join().unwrap();
        let served: u64 = per_worker.iter().sum();
        assert!(
            served >= rep.requests,
            "{model:?}: {per_worker:?} < {}",
            rep.requests
        );
        if let Model::Shared | Model::Segments { .. } = model {
            assert_eq!(per_worker.len(), 2);
            assert!(
                per_worker.iter().all(|&n| n > 0),
                "{model:?}: {per_worker:?}"
            );
        }
    }
}

#[test]
fn load_against_a_closed_port_fails_with_the_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let e = rt
        .block_on(run(&LoadOptions {
            target: port,
            clients: 2,
            duration: Duration::from_millis(100),
            warmup: Duration::ZERO,
            workload: Workload::default(),
            seed: 1,
        }))
        .unwrap_err();
    assert!(e.to_string().contains(&port.to_string()), "{e}");
}
