//! The fixture gates of SPEC §11, through the real binary exactly as the hook runs it: every
//! fact kept, `identical` fixtures byte for byte, `nocache` fixtures never stored, byte-exact
//! expand of everything stored, repeats served as references, and an aggregate reduction.

mod common;

use common::{evaluate, fixtures_dir, load_fixtures};
use std::path::Path;

/// Minimum aggregate token reduction over the non-identical fixtures, header included: the
/// issue's target. The corpus stands at 70.2% (446049 → 132779 tokens); logs that hold stack
/// traces are never stored, so only lossless stages (back-references and value tables) run on
/// them. Output is deterministic, so the margin cannot flake.
const AGGREGATE_REDUCTION_GATE: f64 = 70.0;

#[test]
fn every_fixture_passes_its_gates() {
    let bin = Path::new(env!("CARGO_BIN_EXE_sqz"));
    let fixtures = load_fixtures(&fixtures_dir());
    assert!(fixtures.len() >= 15, "only {} fixtures", fixtures.len());
    let mut failures = Vec::new();
    let (mut tokens_in, mut tokens_out) = (0usize, 0usize);
    for fixture in &fixtures {
        assert!(
            !fixture.cmd.is_empty() && (fixture.identical || !fixture.facts.is_empty()),
            "{}: needs cmd and facts",
            fixture.name
        );
        let verdict = evaluate(bin, fixture);
        for problem in verdict.problems() {
            failures.push(format!("{}: {problem}", fixture.name));
        }
        if !fixture.identical {
            tokens_in += verdict.tokens_in;
            tokens_out += verdict.tokens_out;
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let reduction = 100.0 * (tokens_in as f64 - tokens_out as f64) / tokens_in as f64;
    assert!(
        reduction >= AGGREGATE_REDUCTION_GATE,
        "aggregate reduction {reduction:.1}% ({tokens_in} → {tokens_out}) is under the {AGGREGATE_REDUCTION_GATE}% gate"
    );
}
