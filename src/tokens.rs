// temporary until the calibrated tokenizer lands
pub fn count(text: &str) -> usize {
    text.split_whitespace().count() + text.len() / 8
}
pub fn count_bytes(bytes: &[u8]) -> usize {
    count(&String::from_utf8_lossy(bytes))
}
