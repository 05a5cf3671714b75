//! Identifiers survive (SPEC §4.1): in a listing, what names a row stays visible however the
//! rest folds — every pod name of `kubectl get pods`, every process command line of `ps`.

mod common;

use common::{compress, fixtures_dir, Scratch};
use std::path::Path;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn run(name: &str) -> (String, String) {
    let dir = fixtures_dir().join(name);
    let cmd = std::fs::read_to_string(dir.join("cmd")).unwrap();
    let input = std::fs::read_to_string(dir.join("input.txt")).unwrap();
    let s = Scratch::new("ids");
    let out = compress(bin(), &s.db(), cmd.trim(), input.as_bytes()).stdout_text();
    (input, out)
}

#[test]
fn kubectl_get_pods_keeps_every_pod_name() {
    for name in [
        "kubectl-get-pods-crashloop-mixed",
        "kubectl-get-pods-coredns-crashloop",
        "kubectl-get-pods-all-namespaces",
        "kubectl-get-pods-pending",
    ] {
        let (input, out) = run(name);
        let mut lines = input.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        let at = header.iter().position(|h| *h == "NAME").unwrap();
        for row in lines {
            let pod = row.split_whitespace().nth(at).unwrap();
            assert!(out.contains(pod), "{name}: lost {pod}\n{out}");
        }
    }
}

#[test]
fn ps_keeps_every_full_command_line() {
    for (name, before_command) in [
        ("ps-aux", 10),
        ("ps-aux-many", 10),
        ("ps-aux-servers", 10),
        ("ps-ef-servers", 7),
    ] {
        let (input, out) = run(name);
        for row in input.lines().skip(1) {
            let words: Vec<&str> = row.split_whitespace().collect();
            let command = words[before_command..].join(" ");
            let shown = out.lines().any(|l| {
                l.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .ends_with(&command)
            });
            assert!(shown, "{name}: lost {command}\n{out}");
        }
    }
}
