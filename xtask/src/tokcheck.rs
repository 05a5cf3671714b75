pub fn run(_root: &std::path::Path) -> Result<(), String> {
    Err("tokcheck not ready".into())
}
