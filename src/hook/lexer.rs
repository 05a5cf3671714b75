//! The shell lexer: a small reader for the part of bash an agent usually writes. It follows
//! quoting, expansions, compound commands and lists far enough to find every simple command,
//! and refuses (with a reason) any construct it does not fully follow. What to do with each
//! simple command is `rewrite`'s decision, passed in as `check`.

/// Keywords this analysis does not follow.
const UNFOLLOWED: &[&str] = &["case", "esac", "for", "select", "[[", "]]", "in", "time"];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Open {
    If,
    Do,
    Brace,
    Paren,
}

/// One simple command as it is read: its words, unquoted where that matters.
#[derive(Default)]
struct Simple {
    words: Vec<String>,
}

struct Lexer<'a> {
    check: Check,
    s: &'a [u8],
    i: usize,
    stack: Vec<Open>,
    cur: Simple,
    commands: usize,
    /// Whether the next word starts a command (so keywords and assignments count).
    at_start: bool,
    /// Set after a loop header keyword, until its `do`.
    want_do: usize,
    /// The command count when the last list (a body or condition) opened: a list that ends
    /// with no command in it is a syntax error bash reports only when it reaches that line.
    mark: usize,
}

/// Judges one simple command: its words, and whether it runs inside a subshell.
pub type Check = fn(&[String], bool) -> Result<(), &'static str>;

/// Reads `command` to its end, handing each simple command to `check`; `Err` names the first
/// construct it does not follow or that `check` refused.
pub fn analyse(command: &str, check: Check) -> Result<(), &'static str> {
    let mut lx = Lexer {
        check,
        s: command.as_bytes(),
        i: 0,
        stack: Vec::new(),
        cur: Simple::default(),
        commands: 0,
        at_start: true,
        want_do: 0,
        mark: 0,
    };
    lx.run()?;
    if !lx.stack.is_empty() || lx.want_do > 0 {
        return Err("unbalanced compound command");
    }
    if lx.commands == 0 {
        return Err("no command");
    }
    Ok(())
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> u8 {
        *self.s.get(self.i + k).unwrap_or(&0)
    }

    fn in_subshell(&self) -> bool {
        self.stack.contains(&Open::Paren)
    }

    fn run(&mut self) -> Result<(), &'static str> {
        let mut last_op_continues = false;
        while self.i < self.s.len() {
            let c = self.peek(0);
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\\' if self.peek(1) == b'\n' => self.i += 2,
                b'#' => {
                    while self.i < self.s.len() && self.peek(0) != b'\n' {
                        self.i += 1;
                    }
                }
                b'\n' | b';' => {
                    if c == b';' && self.peek(1) == b';' {
                        return Err("case syntax");
                    }
                    if c == b';' && self.cur.words.is_empty() && self.at_start {
                        return Err("empty command before ';'");
                    }
                    if c == b'\n' && last_op_continues {
                        self.i += 1;
                        continue;
                    }
                    self.end_simple()?;
                    self.i += 1;
                    last_op_continues = false;
                    continue;
                }
                b'&' => {
                    if self.peek(1) == b'&' {
                        self.operator()?;
                        self.i += 2;
                        last_op_continues = true;
                        continue;
                    }
                    if self.peek(1) == b'>' {
                        self.redirect(true)?;
                        continue;
                    }
                    return Err("background job");
                }
                b'|' => {
                    let n = if matches!(self.peek(1), b'|' | b'&') {
                        2
                    } else {
                        1
                    };
                    self.operator()?;
                    self.i += n;
                    last_op_continues = true;
                    continue;
                }
                b'(' => {
                    if self.peek(1) == b'(' {
                        return Err("arithmetic command");
                    }
                    if !self.cur.words.is_empty() || !self.at_start {
                        return Err("function definition or unexpected '('");
                    }
                    self.stack.push(Open::Paren);
                    self.mark = self.commands;
                    self.i += 1;
                    self.at_start = true;
                }
                b')' => {
                    if self.stack.last() != Some(&Open::Paren) {
                        return Err("unbalanced ')'");
                    }
                    self.end_simple()?;
                    self.close_list()?;
                    self.stack.pop();
                    self.i += 1;
                    self.at_start = false;
                }
                b'<' | b'>' => {
                    if self.peek(1) == b'(' {
                        return Err("process substitution");
                    }
                    self.redirect(false)?;
                }
                _ => {
                    let word = self.word()?;
                    if matches!(self.peek(0), b'<' | b'>') && !word.is_empty() {
                        if word.bytes().all(|b| b.is_ascii_digit()) {
                            let fd = word.clone();
                            self.redirect_fd(&fd)?;
                            continue;
                        }
                        if word.starts_with('{') {
                            return Err("named file descriptor");
                        }
                    }
                    self.push_word(word)?;
                }
            }
            last_op_continues = false;
        }
        if last_op_continues {
            return Err("command ends with an operator");
        }
        self.end_simple()
    }

    /// A pipe or list operator: it must follow a command.
    fn operator(&mut self) -> Result<(), &'static str> {
        if self.cur.words.is_empty() && self.at_start {
            return Err("operator without a command");
        }
        self.end_simple()
    }

    fn redirect(&mut self, and_out: bool) -> Result<(), &'static str> {
        if and_out {
            // `&>` or `&>>`: all output to a file.
            return Err("output redirected to a file");
        }
        self.redirect_fd("")
    }

    fn redirect_fd(&mut self, fd: &str) -> Result<(), &'static str> {
        let c = self.peek(0);
        self.i += 1;
        let mut dup = false;
        if c == b'>' {
            if matches!(self.peek(0), b'>' | b'|') {
                self.i += 1;
            } else if self.peek(0) == b'&' {
                self.i += 1;
                dup = true;
            }
        } else if self.peek(0) == b'&' {
            self.i += 1;
            dup = true;
        } else if self.peek(0) == b'>' {
            self.i += 1;
        }
        while matches!(self.peek(0), b' ' | b'\t') {
            self.i += 1;
        }
        if matches!(
            self.peek(0),
            0 | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
        ) {
            return Err("redirection without a target");
        }
        let target = self.word()?;
        if target.is_empty() {
            return Err("redirection without a target");
        }
        let to_stdout = c == b'>' && (fd.is_empty() || fd == "1");
        if to_stdout {
            let is_fd = dup && (target == "-" || target.bytes().all(|b| b.is_ascii_digit()));
            if !is_fd {
                return Err("output redirected to a file");
            }
            if target == "-" {
                return Err("stdout closed");
            }
        }
        Ok(())
    }

    /// Reads one word, following quotes and substitutions; returns it with quotes removed
    /// (substitutions are kept as written, so they never match a name).
    fn word(&mut self) -> Result<String, &'static str> {
        let mut out = Vec::new();
        while self.i < self.s.len() {
            let c = self.peek(0);
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b')' => break,
                b'(' => return Err("function definition or glob pattern"),
                b'\\' => {
                    if self.i + 1 >= self.s.len() {
                        return Err("trailing backslash");
                    }
                    if self.peek(1) != b'\n' {
                        out.push(self.peek(1));
                    }
                    self.i += 2;
                }
                b'\'' => {
                    self.i += 1;
                    let start = self.i;
                    while self.i < self.s.len() && self.peek(0) != b'\'' {
                        self.i += 1;
                    }
                    if self.i >= self.s.len() {
                        return Err("unterminated quote");
                    }
                    out.extend_from_slice(&self.s[start..self.i]);
                    self.i += 1;
                }
                b'"' => {
                    self.i += 1;
                    loop {
                        match self.peek(0) {
                            0 if self.i >= self.s.len() => return Err("unterminated quote"),
                            b'"' => {
                                self.i += 1;
                                break;
                            }
                            b'\\' => {
                                out.push(self.peek(1));
                                self.i += 2;
                            }
                            b'$' => {
                                out.push(b'$');
                                self.dollar()?;
                            }
                            b'`' => {
                                out.push(b'`');
                                self.backtick()?;
                            }
                            b => {
                                out.push(b);
                                self.i += 1;
                            }
                        }
                    }
                }
                b'$' => {
                    out.push(b'$');
                    if self.peek(1) == b'\'' || self.peek(1) == b'"' {
                        return Err("locale or ANSI-C quoting");
                    }
                    self.dollar()?;
                }
                b'`' => {
                    out.push(b'`');
                    self.backtick()?;
                }
                b'{' if !out.is_empty() || self.peek(1) != b' ' => {
                    out.push(b'{');
                    self.i += 1;
                }
                _ => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| "not UTF-8")
    }

    /// At a `$`: skips a parameter, a command substitution, or fails on forms whose errors
    /// would end the shell.
    fn dollar(&mut self) -> Result<(), &'static str> {
        self.i += 1;
        match self.peek(0) {
            b'(' => {
                if self.peek(1) == b'(' {
                    return Err("arithmetic expansion");
                }
                self.i += 1;
                self.skip_until_close(b')')
            }
            b'{' => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.peek(0) != b'}' {
                    if matches!(self.peek(0), b'$' | b'`' | b'\'' | b'"' | b'\\' | b'{') {
                        return Err("nested parameter expansion");
                    }
                    self.i += 1;
                }
                if self.i >= self.s.len() {
                    return Err("unterminated parameter expansion");
                }
                let inner = &self.s[start..self.i];
                self.i += 1;
                if simple_parameter(inner) {
                    Ok(())
                } else {
                    Err("parameter expansion that may assign or fail")
                }
            }
            _ => Ok(()),
        }
    }

    fn backtick(&mut self) -> Result<(), &'static str> {
        self.i += 1;
        while self.i < self.s.len() {
            match self.peek(0) {
                b'\\' => self.i += 2,
                b'`' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => self.i += 1,
            }
        }
        Err("unterminated backquote")
    }

    /// Skips the body of `$(` … `)`, following quotes and nesting. Its commands run in a
    /// subshell, so only their syntax matters.
    fn skip_until_close(&mut self, close: u8) -> Result<(), &'static str> {
        let mut depth = 1usize;
        while self.i < self.s.len() {
            let c = self.peek(0);
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'\'' => {
                    while self.i < self.s.len() && self.peek(0) != b'\'' {
                        self.i += 1;
                    }
                    if self.i >= self.s.len() {
                        return Err("unterminated quote");
                    }
                    self.i += 1;
                }
                b'"' => loop {
                    match self.peek(0) {
                        0 if self.i >= self.s.len() => return Err("unterminated quote"),
                        b'"' => {
                            self.i += 1;
                            break;
                        }
                        b'\\' => self.i += 2,
                        b'$' if self.peek(1) == b'(' => {
                            self.i += 2;
                            self.skip_until_close(b')')?;
                        }
                        _ => self.i += 1,
                    }
                },
                b'`' => {
                    self.i -= 1;
                    self.backtick()?;
                }
                b'#' => return Err("comment inside a substitution"),
                b'(' => depth += 1,
                b')' if close == b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("unterminated substitution")
    }

    fn push_word(&mut self, word: String) -> Result<(), &'static str> {
        if self.at_start && self.cur.words.is_empty() {
            if matches!(
                word.as_str(),
                "then" | "else" | "elif" | "fi" | "do" | "done" | "}"
            ) {
                self.close_list()?;
            }
            if matches!(
                word.as_str(),
                "if" | "then" | "else" | "elif" | "while" | "until" | "do" | "{"
            ) {
                self.mark = self.commands;
            }
            match word.as_str() {
                "if" | "while" | "until" => {
                    if word == "if" {
                        self.stack.push(Open::If);
                    } else {
                        self.want_do += 1;
                    }
                    return Ok(());
                }
                "then" | "else" | "elif" => {
                    if self.stack.last() != Some(&Open::If) {
                        return Err("unbalanced if");
                    }
                    return Ok(());
                }
                "fi" => {
                    if self.stack.pop() != Some(Open::If) {
                        return Err("unbalanced if");
                    }
                    self.at_start = false;
                    return Ok(());
                }
                "do" => {
                    if self.want_do == 0 {
                        return Err("unbalanced do");
                    }
                    self.want_do -= 1;
                    self.stack.push(Open::Do);
                    return Ok(());
                }
                "done" => {
                    if self.stack.pop() != Some(Open::Do) {
                        return Err("unbalanced done");
                    }
                    self.at_start = false;
                    return Ok(());
                }
                "{" => {
                    self.stack.push(Open::Brace);
                    return Ok(());
                }
                "}" => {
                    if self.stack.pop() != Some(Open::Brace) {
                        return Err("unbalanced '}'");
                    }
                    self.at_start = false;
                    return Ok(());
                }
                "!" => return Ok(()),
                _ => {}
            }
            if UNFOLLOWED.contains(&word.as_str()) {
                return Err("shell construct not analysed");
            }
        } else if !self.at_start && self.cur.words.is_empty() {
            // A word right after `fi`, `done`, `}` or `)`.
            return Err("unexpected word after a compound command");
        }
        if matches!(word.as_str(), "{" | "}") && self.cur.words.is_empty() {
            return Err("unbalanced braces");
        }
        self.cur.words.push(word);
        Ok(())
    }

    fn close_list(&self) -> Result<(), &'static str> {
        if self.commands > self.mark {
            Ok(())
        } else {
            Err("empty command list")
        }
    }

    fn end_simple(&mut self) -> Result<(), &'static str> {
        let words = std::mem::take(&mut self.cur.words);
        self.at_start = true;
        if words.is_empty() {
            return Ok(());
        }
        self.commands += 1;
        (self.check)(&words, self.in_subshell())
    }
}

/// `NAME`, `#NAME`, or `NAME` followed by a default, alternative, trim or replace operator:
/// forms that neither assign nor abort the shell.
fn simple_parameter(inner: &[u8]) -> bool {
    let body = inner.strip_prefix(b"#").unwrap_or(inner);
    let name_len = body
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    if name_len == 0 {
        return false;
    }
    let name = &body[..name_len];
    let special = name.iter().all(|b| b.is_ascii_digit());
    if !special && name[0].is_ascii_digit() {
        return false;
    }
    let rest = &body[name_len..];
    if rest.is_empty() {
        return true;
    }
    if inner.starts_with(b"#") {
        return false;
    }
    if rest.contains(&b'=') || rest.contains(&b'?') {
        return false;
    }
    matches!(
        rest,
        [b':', b'-' | b'+', ..] | [b'-' | b'+' | b'%' | b'#' | b'/' | b'^' | b',', ..]
    )
}

pub fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = word[..eq].trim_end_matches('+');
    let name = name.split('[').next().unwrap_or("");
    !name.is_empty()
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
