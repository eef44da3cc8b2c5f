use super::*;

/// A recorded pid whose process is now another one (a different start time) is never signalled.
#[tokio::test]
async fn a_reused_pid_is_never_signalled() {
    let mut child = Command::new("sleep")
        .arg("100")
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let me = ProcId::of(pid).unwrap();
    let stale = ProcId {
        pid,
        start_time: me.start_time.wrapping_sub(1),
    };
    assert!(!stop_leftover(stale, Duration::from_millis(100)));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), child.wait())
            .await
            .is_err(),
        "still running"
    );
    assert_eq!(group_members(pid), vec![pid]);
    assert!(stop_leftover(me, Duration::from_secs(2)));
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .unwrap()
        .unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(15), "SIGTERM to the group");
}

#[test]
fn stderr_tail_is_bounded() {
    let mut t = StderrTail::default();
    for i in 0..100 {
        t.push(&format!("line {i}"));
    }
    let text = t.text();
    assert!(text.ends_with("line 99"));
    assert!(!text.contains("line 59\n"));
    assert_eq!(text.lines().count(), STDERR_TAIL_LINES);
    t.push(&"x".repeat(10_000));
    assert!(t.text().len() <= STDERR_TAIL_BYTES);
}

#[test]
fn stderr_lines_survive_bad_bytes_and_cap_long_lines() {
    let input: Vec<u8> = [
        &b"ok\r\nbad \xff\xfe bytes\n"[..],
        &vec![b'x'; 3 * STDERR_LINE_BYTES],
        b"\nafter\nno newline",
    ]
    .concat();
    // Every split point gives the same lines.
    for split in [1, 2, 7, 4096, input.len()] {
        let mut l = StderrLines::default();
        let mut got = Vec::new();
        for chunk in input.chunks(split) {
            l.feed(chunk, &mut |s| got.push(s));
        }
        got.extend(l.finish());
        assert_eq!(got.len(), 5, "split {split}");
        assert_eq!(got[0], "ok");
        assert_eq!(got[1], "bad \u{fffd}\u{fffd} bytes");
        assert_eq!(got[2].len(), STDERR_LINE_BYTES + '…'.len_utf8());
        assert!(got[2].ends_with('…'));
        assert_eq!(got[3], "after");
        assert_eq!(got[4], "no newline");
    }
}

#[test]
fn flags_match_the_sdk_invocation() {
    let spec = SpawnSpec {
        session_id: "s".into(),
        cwd: ".".into(),
        model: Some("m".into()),
        permission_mode: Some("plan".into()),
        stdin_queue: 1,
        resume: None,
        claude_config_dir: None,
    };
    let f = claude_flags(&spec).join(" ");
    assert_eq!(
        f,
        "--output-format stream-json --verbose --input-format stream-json --permission-prompt-tool stdio \
         --include-partial-messages --replay-user-messages --model m --permission-mode plan"
    );
    let l = CommandLauncher::demo("/x/relay", Some("edit".into()), vec!["--extra".into()]);
    let cmd = l.command(&spec);
    let args: Vec<_> = cmd
        .as_std()
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(&args[..3], ["demo-agent", "--scenario", "edit"]);
    assert_eq!(args.last().unwrap(), "--extra");
}

#[test]
fn stdout_reads_gather_only_during_a_burst() {
    let t0 = std::time::Instant::now();
    let ms = |n: u64| t0 + Duration::from_micros(n * 1000);
    let cap = 64 * 1024;
    let mut p = ReadPacer::default();
    // A first line, and a line after a pause, are read at once.
    assert_eq!(p.after_read(t0, 300, cap), None);
    assert_eq!(p.after_read(ms(50), 300, cap), None);
    // A line within two windows of the last read starts a burst: wait one window.
    assert_eq!(
        p.after_read(ms(50) + Duration::from_micros(50), 300, cap),
        Some(READ_GATHER)
    );
    // The burst goes on (each read one window and a little after the last) ...
    assert_eq!(p.after_read(ms(52), 7000, cap), Some(READ_GATHER));
    assert_eq!(p.after_read(ms(53), 7000, cap), Some(READ_GATHER));
    // ... but a full buffer is read again at once: the pipe must drain.
    assert_eq!(
        p.after_read(ms(53) + Duration::from_micros(10), cap, cap),
        None
    );
    // Quiet again: the next line is read at once.
    assert_eq!(p.after_read(ms(60), 300, cap), None);
}

/// Lines as the stdout reader hands them over; `backlogged` as a session that is behind says it.
#[derive(Default)]
struct Lines {
    got: Mutex<Vec<String>>,
    bad: Mutex<Vec<String>>,
    backlogged: bool,
}

impl AgentEvents for Lines {
    fn on_line(&self, text: &str) {
        self.got.lock().unwrap().push(text.to_owned());
    }
    fn on_undecodable(&self, error: &str, _raw: &str) {
        self.bad.lock().unwrap().push(error.to_owned());
    }
    fn on_exit(&self, _exit: ExitInfo) {}
    fn backlogged(&self) -> bool {
        self.backlogged
    }
}

#[test]
fn stdout_reader_hands_over_every_line_of_a_burst_in_order() {
    for backlogged in [false, true] {
        let (reader, mut writer) = std::io::pipe().unwrap();
        // 3 MB in lines that straddle the reader's 64 KB reads, and a last line without its newline.
        let lines: Vec<String> = (0..30_000)
            .map(|i| {
                format!(
                    r#"{{"type":"stream_event","n":{i},"pad":"{}"}}"#,
                    "x".repeat(i % 97)
                )
            })
            .collect();
        let sent = lines.clone();
        let feeder = std::thread::spawn(move || {
            use std::io::Write as _;
            for (i, l) in sent.iter().enumerate() {
                writer.write_all(l.as_bytes()).unwrap();
                if i + 1 < sent.len() {
                    writer.write_all(b"\n").unwrap();
                }
            }
        });
        let ev = Lines {
            backlogged,
            ..Lines::default()
        };
        read_stdout(reader, &ev);
        feeder.join().unwrap();
        assert!(ev.bad.lock().unwrap().is_empty());
        assert_eq!(*ev.got.lock().unwrap(), lines, "backlogged: {backlogged}");
    }
}

#[test]
fn stdout_reader_reports_a_line_it_cannot_frame_and_goes_on() {
    let (reader, mut writer) = std::io::pipe().unwrap();
    {
        use std::io::Write as _;
        writer
            .write_all(b"{\"a\":1}\n\xff\xfe not utf-8\n{\"b\":2}\n")
            .unwrap();
    }
    drop(writer);
    let ev = Lines::default();
    read_stdout(reader, &ev);
    assert_eq!(*ev.got.lock().unwrap(), vec![r#"{"a":1}"#, r#"{"b":2}"#]);
    assert_eq!(ev.bad.lock().unwrap().len(), 1);
}
