//! The after-tool hooks of Gemini CLI, Copilot CLI and OpenCode: the client ran the command as
//! the agent wrote it, and the hook offers a shorter text for its output. The command is never
//! touched, so nothing is asked and the exit status is whatever the client reports. This file
//! owns the one rule the three share: which compressed text may replace an output.

use crate::serve::{Backend, Served};
use crate::store::EventKind;

/// The compressed text to show instead of `output`, the output of `command`, or `None` when the
/// output must stay as it is: a command that already went through sqz (`sqz expand` must come
/// back whole), nothing to compress, or a result that is not shorter. No reference or delta is
/// asked for: these clients show the text alone, with no header to say what a `§ref§` means, so
/// a re-run's output comes out compressed the same way again.
pub fn shorter(command: &str, output: &str, backend: &mut dyn Backend) -> Option<String> {
    if command.contains("sqz") || output.trim().is_empty() {
        return None;
    }
    let Served { kind, stdout, .. } = backend.compress_whole(command, output.as_bytes());
    if matches!(kind, EventKind::Ref | EventKind::Slice) {
        return None;
    }
    let served = String::from_utf8(stdout).ok()?;
    let pays = served.len() < output.len()
        && crate::tokens::count(&served) < crate::tokens::count(output)
        && !crate::doc::reference::holds_ref(&served);
    pays.then_some(served)
}

/// A backend for the handlers' tests: compresses with `f` and stores nothing.
#[cfg(test)]
pub struct Fake<F: FnMut(&str, &[u8]) -> (EventKind, Vec<u8>)>(pub F);

#[cfg(test)]
impl<F: FnMut(&str, &[u8]) -> (EventKind, Vec<u8>)> Backend for Fake<F> {
    fn compress(&mut self, label: &str, body: &[u8]) -> Served {
        let (kind, stdout) = (self.0)(label, body);
        Served {
            stdout,
            header: None,
            kind,
            hash: String::new(),
            notice: None,
            reason: None,
        }
    }

    fn lossless(&mut self, _: &crate::serve::read::Lossless) -> crate::serve::read::Shown {
        crate::serve::read::Shown::Unstored
    }

    fn agent_wrote(&mut self, _: &str, _: &str) {}
}

/// The fake compression the handlers' tests use: every `line` of the output folds to one.
#[cfg(test)]
pub fn fold_lines(_: &str, body: &[u8]) -> (EventKind, Vec<u8>) {
    let text = String::from_utf8_lossy(body);
    if text.lines().filter(|l| *l == "line").count() < 2 {
        return (EventKind::Fresh, body.to_vec());
    }
    let kept: Vec<&str> = text.lines().filter(|l| *l != "line").collect();
    let mut out = String::from("[line ×many]\n");
    for l in kept {
        out.push_str(l);
        out.push('\n');
    }
    (EventKind::Generic, out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_shorter_plain_text_replaces_the_output() {
        let long = "line\n".repeat(50) + "error: it broke\n";
        let mut fake = Fake(fold_lines);
        assert_eq!(
            shorter("make", &long, &mut fake).as_deref(),
            Some("[line ×many]\nerror: it broke\n")
        );
        for (command, output) in [("sqz expand abc", long.as_str()), ("ls", ""), ("ls", "\n")] {
            assert_eq!(shorter(command, output, &mut fake), None, "{command}");
        }
        let same = &mut Fake(|_: &str, b: &[u8]| (EventKind::Fresh, b.to_vec()));
        assert_eq!(shorter("make", &long, same), None);
        let reference = &mut Fake(|_: &str, _: &[u8]| {
            (
                EventKind::Ref,
                b"\xc2\xa7ref:0123456789abcdef\xc2\xa7\n".to_vec(),
            )
        });
        assert_eq!(shorter("make", &long, reference), None);
    }
}
