//! vite and webpack builds (directly, through npx, or as `npm run build`): folds the asset
//! listing of vite (all but the HTML entries and the largest chunks), webpack's module lists
//! (`modules by path`, `cacheable modules`) and its module-resolution trace. Every warning,
//! error and location, and the `built in` / `compiled …` lines stay. Output that is neither
//! tool's is refused, so `npm run build` of another tool falls through.

use super::fold::{fold_kinds, folds_any, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// The largest assets a vite build lists stay visible: they are what an agent checks.
const LARGEST_KEPT: usize = 3;

pub fn matches(label: &Label) -> bool {
    let sub = label.subcommand();
    match label.program {
        "vite" | "webpack" | "webpack-cli" => true,
        "npx" | "bunx" | "pnpx" => matches!(sub, Some("vite" | "webpack" | "webpack-cli")),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let script = if sub == Some("run") {
                label
                    .args
                    .iter()
                    .copied()
                    .filter(|a| !a.starts_with('-'))
                    .nth(1)
            } else {
                sub
            };
            script.is_some_and(|s| s == "build" || s.starts_with("build:"))
        }
        _ => false,
    }
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let vite = doc
        .lines
        .iter()
        .any(|l| l.starts_with("vite v") && l.contains(" building "));
    let webpack = doc.lines.iter().any(|l| {
        l.starts_with("webpack ") && l.contains(" compiled ")
            || l.starts_with("Hash: ")
            || l.starts_with("asset ") && l.contains(" [emitted]")
    });
    let kinds = if vite {
        vite_kinds(doc)
    } else if webpack {
        webpack_kinds(doc)
    } else {
        return None;
    };
    let pieces = fold_kinds(doc, &kinds, &DEFAULT);
    folds_any(&pieces).then_some(pieces)
}

/// `dist/assets/index-abc.js  142.3 kB │ gzip: 45.6 kB`: the size in kB, if the line is one.
fn vite_asset_size(line: &str) -> Option<f64> {
    let (path, rest) = line.split_once(' ')?;
    if path.contains('│') || !path.contains('/') || !path.contains('.') {
        return None;
    }
    let mut words = rest.split_whitespace();
    let size: f64 = words.next()?.parse().ok()?;
    matches!(words.next()?, "kB" | "B" | "MB").then_some(size)
}

fn vite_kinds(doc: &Doc) -> Vec<Option<&'static str>> {
    let is_entry = |line: &str| line.split(' ').next().is_some_and(|p| p.ends_with(".html"));
    let sizes: Vec<Option<f64>> = doc
        .lines
        .iter()
        .map(|l| vite_asset_size(l).filter(|_| !is_entry(l)))
        .collect();
    let mut by_size: Vec<(usize, f64)> = sizes
        .iter()
        .enumerate()
        .filter_map(|(n, s)| s.map(|s| (n, s)))
        .collect();
    by_size.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let largest: Vec<usize> = by_size.iter().take(LARGEST_KEPT).map(|(n, _)| *n).collect();
    (0..doc.lines.len())
        .map(|n| (sizes[n].is_some() && !largest.contains(&n)).then_some("asset"))
        .collect()
}

fn webpack_kinds(doc: &Doc) -> Vec<Option<&'static str>> {
    let mut kinds = vec![None; doc.lines.len()];
    let mut in_resolve = false;
    for (n, line) in doc.lines.iter().enumerate() {
        let t = line.trim_start();
        let indented = t.len() < line.len();
        if line.is_empty() {
            in_resolve = false;
            continue;
        }
        // `resolve './x' in '/src'` and the attempts under it, inside a `Module not found`.
        if line.starts_with("resolve '") {
            in_resolve = true;
            continue;
        }
        if in_resolve && indented {
            kinds[n] = Some("module resolution step");
            continue;
        }
        in_resolve = false;
        let module = (t.starts_with("./") || t.starts_with("../") || t.starts_with("webpack/"))
            && has_size(t);
        let more = t.starts_with("+ ") && t.ends_with(" modules");
        let asset = line.starts_with("asset ") && !line.contains("[big]");
        if module || more {
            kinds[n] = Some("module");
        } else if asset {
            kinds[n] = Some("asset");
        }
    }
    kinds
}

/// `533 KiB`, `101 bytes`, `1.2 MiB` somewhere in a webpack line.
fn has_size(t: &str) -> bool {
    let words: Vec<&str> = t.split_whitespace().collect();
    words.windows(2).any(|w| {
        w[0].parse::<f64>().is_ok() && matches!(w[1], "bytes" | "KiB" | "MiB" | "GiB" | "kB")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::label::Label;
    use crate::doc::render;

    const VITE: &str = "vite v7.3.8 building client environment for production...
transforming...
✓ 684 modules transformed.
rendering chunks...
computing gzip size...
dist/index.html                          0.23 kB │ gzip:  0.19 kB
dist/assets/users-MbfjBZgf.css           0.08 kB │ gzip:  0.09 kB
dist/assets/orders-PeJX6IWo.css          0.08 kB │ gzip:  0.10 kB
dist/assets/reports-D_Js2EHx.css         0.09 kB │ gzip:  0.10 kB
dist/assets/users-CVfxH3HK.js            0.15 kB │ gzip:  0.15 kB
dist/assets/orders-BSoZfuDe.js           0.15 kB │ gzip:  0.15 kB
dist/assets/reports-C49nu3Qe.js          0.16 kB │ gzip:  0.15 kB
dist/assets/index-B1GDz0XD.js          238.60 kB │ gzip: 82.98 kB
dist/assets/products-CgJAXBcO.js       571.80 kB │ gzip: 90.42 kB

(!) Some chunks are larger than 500 kB after minification. Consider:
✓ built in 6.39s
";

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn vite_folds_small_assets_and_keeps_the_largest() {
        let out = run("npx vite build", VITE).unwrap();
        assert!(out.contains("dist/index.html "));
        assert!(
            out.contains("[… 5 asset lines · sqz expand h:L7-11]\ndist/assets/reports-C49nu3Qe.js")
        );
        assert!(out.contains("dist/assets/index-B1GDz0XD.js          238.60 kB"));
        assert!(out.contains("dist/assets/products-CgJAXBcO.js       571.80 kB"));
        assert!(out.contains("(!) Some chunks are larger than 500 kB"));
        assert!(out.ends_with("✓ built in 6.39s\n"));
    }

    #[test]
    fn vite_truncated_and_unknown_lines_stay() {
        let cut = &VITE[..VITE.find("238.60").unwrap()];
        let out = run("vite build", cut).unwrap();
        assert!(out.ends_with("dist/assets/index-B1GDz0XD.js          "));
        let odd = VITE.replace(
            "rendering chunks...\n",
            "rendering chunks...\n[plugin:pwa] precache 12 entries (640 KiB)\n",
        );
        assert!(run("vite build", &odd)
            .unwrap()
            .contains("[plugin:pwa] precache 12 entries (640 KiB)\n"));
    }

    const WEBPACK: &str = "asset widget.220e5bc5.js 374 KiB [emitted] [immutable] [minimized] [big] (name: widget) 1 related asset
asset 944.b827c883.js 202 bytes [emitted] [immutable] [minimized]
runtime modules 7.69 KiB 15 modules
modules by path ./node_modules/moment/locale/*.js 526 KiB
  ./node_modules/moment/locale/af.js 2.69 KiB [built] [code generated]
  ./node_modules/moment/locale/am-et.js 2.72 KiB [built] [code generated]
  ./node_modules/moment/locale/ar.js 6.03 KiB [built] [code generated]
  + 135 modules
modules by path ./src/ 1010 bytes
  ./src/index.js + 2 modules 618 bytes [built] [code generated]
  ./src/lib/chart.js 101 bytes [built] [code generated] [1 error]
./node_modules/lodash/lodash.js 533 KiB [built] [code generated]

ERROR in ./src/admin.js 3:0-43
Module not found: Error: Can't resolve './components/modal' in '/home/dev/widget-bundle/src'
resolve './components/modal' in '/home/dev/widget-bundle/src'
  using description file: /home/dev/widget-bundle/package.json (relative path: ./src)
    Field 'browser' doesn't contain a valid alias configuration
      no extension
        /home/dev/widget-bundle/src/components/modal doesn't exist

webpack 5.113.0 compiled with 1 error in 26261 ms
";

    #[test]
    fn webpack_folds_module_lists_and_keeps_errors() {
        let out = run("npm run build", WEBPACK).unwrap();
        assert!(out.contains("modules by path ./node_modules/moment/locale/*.js 526 KiB\n[… 4 module lines · sqz expand h:L5-8]\n"));
        assert!(out.contains("  ./src/lib/chart.js 101 bytes [built] [code generated] [1 error]\n"));
        assert!(out.contains("asset widget.220e5bc5.js 374 KiB"));
        assert!(out.contains("Module not found: Error: Can't resolve './components/modal'"));
        assert!(out.contains("[… 4 module resolution step lines · sqz expand h:L17-20]"));
        assert!(out.ends_with("webpack 5.113.0 compiled with 1 error in 26261 ms\n"));
    }

    #[test]
    fn other_build_tools_are_refused() {
        assert!(run(
            "npm run build",
            "> app@1.0.0 build\n> tsc -p .\n\nsrc/a.ts(1,1): error TS1005: ';' expected.\n"
        )
        .is_none());
        assert!(matches(&Label::parse("pnpm build")));
        assert!(!matches(&Label::parse("npm run lint")));
    }
}
