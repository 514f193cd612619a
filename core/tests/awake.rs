//! A wait that a stop of the whole process spans (Ctrl-Z, a scheduler suspending the job) counts
//! the time awake only. Its own test binary: the test stops its process with SIGSTOP, which
//! would stop every test running beside it.

#[cfg(target_os = "linux")]
#[test]
fn a_wait_does_not_count_the_time_its_process_was_stopped() {
    use kerntune_core::measure::awake::{recv_timeout, Since};
    use std::time::{Duration, Instant};
    let (_tx, rx) = std::sync::mpsc::channel::<()>();
    let me = std::process::id();
    // 0.5 s into a wait of 1.5 s, the process is stopped for 2.5 s.
    let mut stopper = std::process::Command::new("sh").args(["-c", &format!("sleep 0.5; kill -STOP {me}; sleep 2.5; kill -CONT {me}")]).spawn().unwrap();
    let (since, wall) = (Since::now(), Instant::now());
    assert!(recv_timeout(&rx, Duration::from_millis(1500)).is_err());
    let (awake, wall) = (since.elapsed(), wall.elapsed());
    let _ = stopper.wait();
    assert!(wall >= Duration::from_millis(3800), "the wait ended {wall:?} in, before 1.5 s awake (the stop counted as waiting)");
    assert!(awake >= Duration::from_millis(1450) && awake < Duration::from_millis(2500), "{awake:?} awake of {wall:?}");
    assert!(since.stopped() >= Duration::from_millis(2300), "{:?}", since.stopped());
}
