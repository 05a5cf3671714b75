//! The net-win gate: a compressed result is sent only when it, header included, saves at least
//! `MIN_SAVING` tokens over the original. Otherwise the original goes out with no header.

pub struct NetWinGate;

impl NetWinGate {
    pub const MIN_SAVING: usize = 16;

    pub fn passes(tokens_in: usize, tokens_out_with_header: usize) -> bool {
        tokens_in >= tokens_out_with_header + Self::MIN_SAVING
    }
}

#[cfg(test)]
mod tests {
    use super::NetWinGate;

    #[test]
    fn needs_sixteen_tokens() {
        assert!(NetWinGate::passes(100, 84));
        assert!(!NetWinGate::passes(100, 85));
        assert!(!NetWinGate::passes(10, 20));
    }
}
