//! The three disciplines on a real (small) file: each runs, counts what
//! it did, and leaves every page intact; segments with few slots show the
//! binding; a file that does not match its last writes is caught.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Duration;
use tcpwise_aio::{AioError, DataFile, Keys, Model, Options, page};

/// A directory of its own under /var/tmp (a disk filesystem: /tmp may be
/// tmpfs, which refuses O_DIRECT), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = PathBuf::from(format!(
            "/var/tmp/tcpwise-test-aio-{tag}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn file(&self) -> PathBuf {
        self.0.join("data.dat")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn uring_or_skip() -> bool {
    match tcpwise_aio::probe() {
        Ok(()) => true,
        Err(e) if std::env::var_os("TCPWISE_REQUIRE_IO_URING").is_none() => {
            eprintln!("skipped: {e}");
            false
        }
        Err(e) => panic!("TCPWISE_REQUIRE_IO_URING=1 but {e}"),
    }
}

const SIZE: u64 = 8 << 20;

fn opts(model: &str, clients: u32, keys: Keys) -> Options {
    Options {
        model: model.parse::<Model>().unwrap(),
        clients,
        threads: 4,
        duration: Duration::from_millis(400),
        keys,
        seed: 3,
    }
}

#[test]
fn every_model_runs_counts_and_leaves_every_page_intact() {
    if !uring_or_skip() {
        return;
    }
    let dir = Scratch::new("models");
    let mut created = false;
    let file = DataFile::open(&dir.file(), SIZE, || created = true).unwrap();
    assert!(created);
    assert_eq!(file.pages, 512);
    // A second open reuses it.
    let again = DataFile::open(&dir.file(), SIZE, || panic!("recreated")).unwrap();
    drop(again);
    for keys in [Keys::Uniform, Keys::Zipf(0.99)] {
        for model in [
            "shared",
            "segments",
            "sync",
            "innodb",
            "innodb:without=slots32+lowest-first+spill+wake-all",
        ] {
            let r = tcpwise_aio::run(&opts(model, 32, keys), &file).unwrap();
            assert!(r.txns > 0, "{model} {keys}: no transaction");
            assert_eq!(r.verified_pages, 512);
            assert_eq!(r.per_thread_completions.len(), 4);
            // Every committed transaction is a read and a write completion.
            let done: u64 = r.per_thread_completions.iter().sum();
            assert!(
                done >= 2 * r.txns,
                "{model}: {done} completions, {} txns",
                r.txns
            );
            assert!(r.inflight_peak >= 1 && r.inflight_peak <= 32);
            if model == "sync" {
                assert!(r.inflight_peak <= 4);
            }
            assert!(r.p50_ms > 0.0 && r.p50_ms <= r.p99_ms && r.p99_ms <= r.max_ms);
            if keys != Keys::Uniform {
                // 32 clients on a Zipf(0.99) page set collide on page 0.
                assert!(r.latch_waits > 0, "{model}: no latch wait under skew");
            }
        }
    }
}

#[test]
fn segments_with_few_slots_make_ios_wait_for_one() {
    if !uring_or_skip() {
        return;
    }
    let dir = Scratch::new("slots");
    let file = DataFile::open(&dir.file(), SIZE, || {}).unwrap();
    let r = tcpwise_aio::run(&opts("segments:2", 64, Keys::Uniform), &file).unwrap();
    // 4 segments x 2 slots: never more than 8 in flight, the rest queue.
    assert!(r.inflight_peak <= 8, "{}", r.inflight_peak);
    assert!(r.slot_waits > 0);
    assert!(r.queued_peak >= 64 - 8, "{}", r.queued_peak);
    assert!(r.slot_wait_p99_ms > 0.0);
    let wide = tcpwise_aio::run(&opts("segments", 64, Keys::Uniform), &file).unwrap();
    assert_eq!(
        wide.slot_waits, 0,
        "64 slots a segment never fill with 64 clients"
    );
}

#[test]
fn lost_torn_and_foreign_pages_are_caught() {
    let dir = Scratch::new("verify");
    let file = DataFile::open(&dir.file(), SIZE, || {}).unwrap();
    let mut expected = vec![None; 512];
    assert_eq!(file.verify(&expected).unwrap(), 512);
    // A write we believe happened but is not on disk: lost.
    expected[7] = Some(1);
    match file.verify(&expected) {
        Err(AioError::Corrupt { page: 7, error, .. }) => {
            assert_eq!(
                error,
                page::PageError::Stale {
                    found: 0,
                    expected: 1
                }
            )
        }
        other => panic!("{other:?}"),
    }
    // A flipped byte in page 9: torn or corrupt.
    let raw = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.file())
        .unwrap();
    raw.write_all_at(&[0xff], 9 * page::PAGE as u64 + 5000)
        .unwrap();
    raw.sync_all().unwrap();
    match file.verify(&vec![None; 512]) {
        Err(AioError::Corrupt { page: 9, error, .. }) => {
            assert_eq!(error, page::PageError::Checksum)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_that_are_not_ours_or_of_another_size_are_refused_untouched() {
    let dir = Scratch::new("refuse");
    let p = dir.file();
    std::fs::write(&p, vec![7u8; SIZE as usize]).unwrap();
    match DataFile::open(&p, SIZE, || panic!("would overwrite")) {
        Err(e @ AioError::NotOurs(..)) => assert!(e.to_string().contains("refusing")),
        other => panic!("{:?}", other.map(|_| ())),
    }
    match DataFile::open(&p, SIZE * 2, || panic!("would overwrite")) {
        Err(e @ AioError::Size { .. }) => assert!(e.to_string().contains("--size")),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(std::fs::read(&p).unwrap(), vec![7u8; SIZE as usize]);
}
