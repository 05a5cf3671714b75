//! make with gcc or clang: folds the echoed compile commands (`gcc … -c x.c -o x.o`), quiet
//! kbuild-style lines (`  CC      x.o`) and `make[N]: Entering/Leaving directory` lines into
//! counted markers. Every diagnostic with its `file:line:col`, code frame, `In function`
//! context, the link and archive commands (they name what was built) and every `make: ***`
//! line stay verbatim; a fact line is never folded.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "make" | "gmake")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let compiles = doc.lines.iter().filter(|l| is_compile_command(l)).count();
    let make_lines = doc.lines.iter().any(|l| is_make_message(l));
    if compiles == 0 && !make_lines {
        return None;
    }
    let mut lines = Vec::new();
    for (n, line) in doc.lines.iter().enumerate() {
        let foldable = is_compile_command(line) || is_quiet_step(line) || is_directory_change(line);
        if foldable && !is_fact(line) {
            lines.push(n);
        }
    }
    if lines.len() < 2 {
        return None;
    }
    // One marker for all build commands, where the first one was; diagnostics follow in order.
    let first = lines[0];
    let folded: std::collections::HashSet<usize> = lines.iter().copied().collect();
    let mut out = Vec::new();
    for n in 0..doc.lines.len() {
        if n == first {
            out.push(Piece::Fold {
                lines: lines.clone(),
                what: "compile command".to_string(),
            });
        } else if !folded.contains(&n) {
            out.push(Piece::Keep(n));
        }
    }
    Some(out)
}

/// A C/C++ compiler driver invoked to compile one file: `gcc … -c src/x.c -o build/x.o`.
/// A line cut before its source file is not one. Link (`-shared`, no `-c`) and archive (`ar rcs`) lines do not count: they name the
/// artifacts.
fn is_compile_command(line: &str) -> bool {
    let mut words = line.split_ascii_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    let program = program.rsplit('/').next().unwrap_or(program);
    let driver = ["gcc", "cc", "clang", "g++", "c++", "clang++"]
        .iter()
        .any(|d| program == *d || program.ends_with(&format!("-{d}")) || is_versioned(program, d));
    let words: Vec<&str> = words.collect();
    let source = |w: &&str| {
        [".c", ".cc", ".cpp", ".cxx", ".C", ".m", ".s", ".S"]
            .iter()
            .any(|ext| w.len() > ext.len() && w.ends_with(ext))
    };
    driver && words.contains(&"-c") && words.iter().any(source)
}

/// `gcc-12`, `clang-16`.
fn is_versioned(program: &str, driver: &str) -> bool {
    program
        .strip_prefix(driver)
        .and_then(|v| v.strip_prefix('-'))
        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// `  CC      src/x.o`, `  CXX     y.o` as printed by quiet (kbuild-style) makefiles.
fn is_quiet_step(line: &str) -> bool {
    let t = line.trim_start();
    if t.len() == line.len() {
        return false;
    }
    let mut words = t.split_ascii_whitespace();
    let (Some(tag), Some(_target), None) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    matches!(tag, "CC" | "CXX" | "AS" | "CPP" | "HOSTCC")
}

/// `make[1]: Entering directory '/home/dev/x'` and its `Leaving` pair.
fn is_directory_change(line: &str) -> bool {
    line.starts_with("make")
        && (line.contains(": Entering directory '") || line.contains(": Leaving directory '"))
}

/// `make: *** [Makefile:12: x.o] Error 1`, `make: Nothing to be done for 'all'.`
fn is_make_message(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("make") else {
        return false;
    };
    rest.starts_with(": ") || (rest.starts_with('[') && rest.contains("]: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANY: &str = include_str!("../../fixtures/make-many-files/input.txt");
    const GCC: &str = include_str!("../../fixtures/make-gcc-errors/input.txt");
    const CLANG: &str = include_str!("../../fixtures/make-clang-errors/input.txt");

    fn run(text: &str) -> String {
        let doc = Doc::new("make", text);
        let pieces = format(&doc).expect("recognised");
        crate::fmt::render_checked(&doc, &pieces, "h")
    }

    #[test]
    fn folds_compile_commands_and_keeps_diagnostics_and_artifacts() {
        let out = run(MANY);
        assert!(out.starts_with("[… 40 compile command lines · sqz expand h]\n"));
        assert!(out.contains("src/simplify.c:6:9: warning: unused variable ‘unused_count’"));
        assert!(out.contains("    6 |     int unused_count;\n      |         ^~~~~~~~~~~~\n"));
        assert!(out.contains("\nar rcs build/libgeo.a "));
        assert!(out.contains("\ngcc -shared -o build/libgeo.so "));
        assert!(!out.contains("-c src/area.c"));
    }

    #[test]
    fn keeps_every_gcc_and_clang_diagnostic() {
        for text in [GCC, CLANG] {
            let out = run(text);
            for line in text.lines().filter(|l| !is_compile_command(l)) {
                assert!(out.contains(line), "{line}");
            }
        }
        assert!(run(GCC).contains("make: *** [Makefile:12: build/router.o] Error 1\n"));
    }

    #[test]
    fn directory_changes_fold_with_the_commands() {
        let text = "make[1]: Entering directory '/home/dev/x'\ncc -c a.c -o a.o\ncc -c b.c -o b.o\nmake[1]: Leaving directory '/home/dev/x'\n";
        assert_eq!(
            run(text),
            "[… 4 compile command lines · sqz expand h:L1-4]\n"
        );
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = MANY.find("-c src/simplify.c").unwrap() + 8;
        let out = run(&MANY[..cut]);
        // The cut line names no source file, so it is not recognised as a compile and stays.
        assert!(out.ends_with("\ngcc -std=c11 -O2 -g -Wall -Wextra -fPIC -Iinclude -c src/s"));
    }

    #[test]
    fn interleaved_parallel_output_keeps_diagnostics_in_place() {
        // `make -j`: a diagnostic of one file between the commands of others.
        let text = GCC.replacen(
            "cc -std=c11 -O2 -Wall -Wextra -Iinclude -c src/buffer.c -o build/buffer.o\n",
            "",
            1,
        );
        let text = text.replacen(
            "src/main.c:9:9:",
            "cc -std=c11 -O2 -Wall -Wextra -Iinclude -c src/buffer.c -o build/buffer.o\nsrc/main.c:9:9:",
            1,
        );
        let out = run(&text);
        assert!(out.contains("src/main.c: In function ‘main’:\nsrc/main.c:9:9: warning"));
    }

    #[test]
    fn unknown_lines_stay_and_other_locales_keep_their_diagnostics() {
        let text = MANY.replacen("ar rcs", "ccache-stats: 12 hits\nar rcs", 1);
        assert!(run(&text).contains("\nccache-stats: 12 hits\n"));
        // gcc under LANG=de_DE: translated diagnostics are facts by location and stay.
        let de = "cc -c a.c -o a.o\ncc -c b.c -o b.o\nb.c:3:5: Warnung: unbenutzte Variable »x« [-Wunused-variable]\nmake: *** [Makefile:4: b.o] Fehler 1\n";
        let out = run(de);
        assert!(out.contains("b.c:3:5: Warnung: unbenutzte Variable »x«"));
        assert!(out.contains("make: *** [Makefile:4: b.o] Fehler 1"));
    }

    #[test]
    fn refuses_output_without_make_or_compiler_lines() {
        assert!(format(&Doc::new("make", "hello\nworld\n")).is_none());
    }
}
