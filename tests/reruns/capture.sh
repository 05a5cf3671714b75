#!/usr/bin/env bash
# Captures the test re-runs that tests/reruns.rs replays: each tool runs twice in a neutral scratch
# project under /home/dev, with one failing test fixed in between, as an agent does after a fix.
# Every file here is exactly what the tool printed (stdout and stderr merged); never edited.
#
# Usage: bash tests/reruns/capture.sh      (needs python3 with pytest, and cargo)
set -u
OUT=$(cd "$(dirname "$0")" && pwd)
# cargo and rustup stay where they are installed; only HOME moves.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUST_BACKTRACE=0
export HOME=/home/dev NO_COLOR=1 TERM=dumb CARGO_TERM_COLOR=never
mkdir -p /home/dev

# pytest: 46 tests, 16 failing; then the rounding bug is fixed and 14 fail.
rm -rf /home/dev/ledger && mkdir -p /home/dev/ledger/tests && cd /home/dev/ledger || exit 1
cat > ledger.py <<'EOF'
def total(items):
    return sum(price * qty for price, qty in items)


def rounded(value):
    return int(value)


def discount(amount, percent):
    if percent > 50:
        raise ValueError(f"discount of {percent}% is not allowed")
    return amount - amount * percent / 100


def tax(amount, rate=0.2):
    return amount * rate
EOF
cat > tests/test_ledger.py <<'EOF'
import pytest
from ledger import total, rounded, discount, tax


@pytest.mark.parametrize("n", range(24))
def test_total_of_n_items(n):
    assert total([(2, 1)] * n) == 2 * n


def test_rounded_half_up():
    assert rounded(2.5) == 3


def test_discount_limit():
    assert discount(100, 60) == 40


def test_tax_default():
    assert tax(100) == 21


def test_tax_zero():
    assert tax(0) == 0


def test_discount_small():
    assert discount(200, 10) == 180


def test_rounded_negative():
    assert rounded(-2.5) == -3


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.15, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65])
def test_tax_rates_round_to_cents(rate):
    assert tax(19.99, rate) == round(19.99 * rate, 2)
EOF
python3 -m pytest -p no:cacheprovider > "$OUT/pytest-1.txt" 2>&1
sed -i 's/    return int(value)/    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)/' ledger.py
python3 -m pytest -p no:cacheprovider > "$OUT/pytest-2.txt" 2>&1
echo "pytest: $(tail -1 "$OUT/pytest-1.txt") / $(tail -1 "$OUT/pytest-2.txt")"

# cargo test: 15 tests, 6 failing, after 8 compiler warnings that every run repeats; then the
# off-by-one in net is fixed and 4 fail.
rm -rf /home/dev/invoice && mkdir -p /home/dev/invoice/src && cd /home/dev/invoice || exit 1
cat > Cargo.toml <<'EOF'
[package]
name = "invoice"
version = "0.1.0"
edition = "2021"
EOF
cat > src/lib.rs <<'EOF'
pub fn net(gross: i64, tax: i64) -> i64 {
    gross - tax - 1
}

pub fn lines(n: usize) -> Vec<usize> {
    (0..n).collect()
}

pub fn label(id: u32) -> String {
    format!("INV-{id:04}")
}

pub fn draft_total(items: &[(i64, i64)]) -> i64 {
    let discount = 0;
    let rounding = 0;
    let currency = "EUR";
    let mut count = 0;
    let mut subtotal = 0;
    for (price, qty) in items {
        let line = price * qty;
        subtotal += price * qty;
    }
    let unused_fee = 5;
    let legacy_tax = 19;
    subtotal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_is_gross_minus_tax() {
        assert_eq!(net(100, 20), 80);
    }

    #[test]
    fn net_of_zero() {
        assert_eq!(net(0, 0), 0);
    }

    #[test]
    fn label_is_padded() {
        assert_eq!(label(7), "INV-007");
    }

    macro_rules! line_counts {
        ($($name:ident: $n:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(lines($n).len(), $n);
            }
        )*};
    }

    line_counts! {
        lines_0: 0, lines_1: 1, lines_2: 2, lines_3: 3, lines_5: 5,
        lines_8: 8, lines_13: 13, lines_21: 21, lines_34: 34,
    }

    macro_rules! labels {
        ($($name:ident: $id:expr => $want:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(label($id), $want);
            }
        )*};
    }

    labels! {
        label_1: 1 => "INV-001", label_2: 2 => "INV-002", label_3: 3 => "INV-003",
    }
}
EOF
cargo test > "$OUT/cargo-test-1.txt" 2>&1
sed -i 's/    gross - tax - 1/    gross - tax/' src/lib.rs
cargo test > "$OUT/cargo-test-2.txt" 2>&1
echo "cargo: $(grep 'test result' "$OUT/cargo-test-1.txt") / $(grep 'test result' "$OUT/cargo-test-2.txt")"
