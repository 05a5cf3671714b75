//! The wall clock. Only the front ends read it (`cmd/`, and the MCP transports for each
//! request); everything below takes `now` as an argument, so the same input and store state
//! always give the same output.

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
