//! Line matching for the MCP grep tool: fixed strings through memmem, and a small regex subset
//! compiled to a Thompson NFA and run over a state set, so time stays linear in the line length.
//! It never backtracks and never panics; syntax outside the subset is a one-line error.

use memchr::memmem::Finder;

/// The supported regex syntax, one line per construct, for the tool description and README.
pub const REGEX_SYNTAX: &str = r"abc                  literal characters (any Unicode)
.                    any character
\. \\ \( \) \[ \] \{ \} \| \* \+ \? \^ \$ \/ \-   escaped punctuation, matched literally
\t \n                tab, newline
[abc] [a-z0-9_]      character class, ranges (- is literal first or last)
[^abc]               negated class; escapes and \d \w \s \D \W \S also work inside classes
\d \w \s             ASCII digit, word char (Unicode letter or digit, or _), whitespace
\D \W \S             any char but a digit, word char, whitespace
^ $                  start, end of the line
\b \B                word boundary, not a word boundary
(x) (?:x)            group (nothing is captured)
x|y                  x or y
x* x+ x?             zero or more, one or more, zero or one
x{n} x{n,} x{n,m}    exactly n, at least n, n to m times (counts up to 1000)
x*? x+? x?? x{n,m}?  lazy forms: accepted, the same lines match
Not supported: backreferences, lookaround, named groups, inline flags, possessive quantifiers";

const MAX_REPEAT: u32 = 1000;
/// Bounds compile time and per-line memory; counts like `(a{1000}){1000}` hit it.
const MAX_INSTS: usize = 100_000;
/// Parsing, compiling and dropping recurse once per group level; this keeps the stack safe.
const MAX_DEPTH: usize = 200;

/// A compiled search pattern: a fixed string, or a regex in the documented subset.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The whole fixed string, or a literal every regex match contains; case-folded with the line.
    needle: Option<Finder<'static>>,
    /// `None` in fixed-string mode, where the needle decides alone.
    program: Option<Program>,
    ignore_case: bool,
}

impl Pattern {
    /// `regex = false`: `text` is a fixed string. `ignore_case`: ASCII and simple Unicode case
    /// folding (single-char lowercase). Errors are one line, with no trailing period.
    pub fn new(text: &str, regex: bool, ignore_case: bool) -> Result<Pattern, String> {
        if text.is_empty() {
            return Err("empty pattern".to_string());
        }
        let (needle, program) = match regex {
            false => (Some(text.to_string()), None),
            true => {
                let node = parse(text)?;
                (required_literal(&node), Some(compile(&node, ignore_case)?))
            }
        };
        let needle = needle.map(|n| if ignore_case { fold_str(&n) } else { n });
        let needle = needle.map(|n| Finder::new(n.as_bytes()).into_owned());
        Ok(Pattern {
            needle,
            program,
            ignore_case,
        })
    }

    /// Whether the pattern matches anywhere in `line` (line has no trailing newline).
    pub fn is_match(&self, line: &str) -> bool {
        if let Some(needle) = &self.needle {
            let found = match self.ignore_case {
                true => needle.find(fold_str(line).as_bytes()),
                false => needle.find(line.as_bytes()),
            };
            if found.is_none() {
                return false;
            }
        }
        self.program
            .as_ref()
            .is_none_or(|program| program.is_match(line))
    }
}

/// Chars whose lowercase is several chars (`İ`) stay as they are, so folding keeps char counts.
fn fold(c: char) -> char {
    match c.is_ascii() {
        true => c.to_ascii_lowercase(),
        false => single(c.to_lowercase()).unwrap_or(c),
    }
}

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    chars.next().filter(|_| chars.next().is_none())
}

fn fold_str(s: &str) -> String {
    match s.is_ascii() {
        true => s.to_ascii_lowercase(),
        false => s.chars().map(fold).collect(),
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A zero-width test on the chars before and after a position (`None` past either end).
type Look = fn(Option<char>, Option<char>) -> bool;

fn word_boundary(prev: Option<char>, next: Option<char>) -> bool {
    prev.is_some_and(is_word) != next.is_some_and(is_word)
}

/// A `\d`-style test on one char.
type Perl = fn(char) -> bool;

#[derive(Clone, Debug, Default)]
struct Class {
    negated: bool,
    ranges: Vec<(char, char)>,
    /// `\d`-style members and whether each is the negated form (`\D`).
    perls: Vec<(Perl, bool)>,
}

impl Class {
    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
            || self.perls.iter().any(|&(test, negated)| test(c) != negated)
    }

    /// Case variants are tried before negation, so `[^a]` rejects `A` when ignoring case.
    fn matches(&self, c: char, ignore_case: bool) -> bool {
        let upper = || single(c.to_uppercase()).is_some_and(|u| self.contains(u));
        let hit = self.contains(c) || (ignore_case && (self.contains(fold(c)) || upper()));
        hit != self.negated
    }
}

enum Node {
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

/// Parses a whole regex into a syntax tree; errors give the construct and its char position.
fn parse(text: &str) -> Result<Node, String> {
    let chars = text.chars().collect();
    let mut parser = Parser {
        chars,
        pos: 0,
        depth: 0,
    };
    let node = parser.parse_alt()?;
    match parser.peek() {
        Some(_) => Err(parser.err(parser.pos, "unmatched )")),
        None => Ok(node),
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn err(&self, at: usize, msg: &str) -> String {
        format!("invalid regex at char {}: {msg}", at + 1)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn parse_alt(&mut self) -> Result<Node, String> {
        let mut branches = vec![self.parse_concat()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            branches.push(self.parse_concat()?);
        }
        Ok(match branches.len() {
            1 => branches.remove(0),
            _ => Node::Alt(branches),
        })
    }

    fn parse_concat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek().filter(|&c| c != '|' && c != ')') {
            let atom = self.parse_atom(c)?;
            items.push(self.parse_quantifier(atom)?);
        }
        Ok(match items.len() {
            1 => items.remove(0),
            _ => Node::Concat(items),
        })
    }

    fn parse_atom(&mut self, c: char) -> Result<Node, String> {
        let at = self.pos;
        self.pos += 1;
        match c {
            '(' => self.parse_group(at),
            '[' => self.parse_class(at).map(Node::Class),
            '\\' => self.parse_escape(at),
            '.' => Ok(Node::Any),
            '^' => Ok(Node::Look(|prev, _| prev.is_none())),
            '$' => Ok(Node::Look(|_, next| next.is_none())),
            '*' | '+' | '?' => Err(self.err(at, &format!("nothing to repeat before {c}"))),
            '{' => Err(self.err(at, r"nothing to repeat before {; write \{")),
            c => Ok(Node::Char(c)),
        }
    }

    fn parse_group(&mut self, at: usize) -> Result<Node, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(at, &format!("groups nested deeper than {MAX_DEPTH}")));
        }
        if self.peek() == Some('?') {
            let after = |i: usize| self.chars.get(self.pos + i).copied();
            let unsupported = match (after(1), after(2)) {
                (Some(':'), _) => "",
                (Some('=' | '!'), _) => "lookahead (?= (?! is not supported",
                (Some('<'), Some('=' | '!')) => "lookbehind (?<= (?<! is not supported",
                (Some('<' | 'P'), _) => "named groups are not supported; use (?:...)",
                (Some('>'), _) => "atomic groups (?> are not supported",
                _ => "inline flags (?...) are not supported; use ignore_case",
            };
            if !unsupported.is_empty() {
                return Err(self.err(at, unsupported));
            }
            self.pos += 2;
        }
        self.depth += 1;
        let inner = self.parse_alt()?;
        self.depth -= 1;
        if self.peek() != Some(')') {
            return Err(self.err(at, "unclosed group"));
        }
        self.pos += 1;
        Ok(inner)
    }

    /// Called with `pos` just past the backslash at `at`; `\d`-style escapes become classes.
    fn parse_escape(&mut self, at: usize) -> Result<Node, String> {
        let Some(c) = self.peek() else {
            return Err(self.err(at, "trailing backslash"));
        };
        self.pos += 1;
        let perl = |test: Perl| {
            let perls = vec![(test, c.is_ascii_uppercase())];
            Ok(Node::Class(Class {
                perls,
                ..Class::default()
            }))
        };
        match c {
            '.' | '\\' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '*' | '+' | '?' | '^' | '$'
            | '/' | '-' => Ok(Node::Char(c)),
            't' => Ok(Node::Char('\t')),
            'n' => Ok(Node::Char('\n')),
            'd' | 'D' => perl(|c| c.is_ascii_digit()),
            'w' | 'W' => perl(is_word),
            's' | 'S' => perl(char::is_whitespace),
            'b' => Ok(Node::Look(word_boundary)),
            'B' => Ok(Node::Look(|prev, next| !word_boundary(prev, next))),
            '0'..='9' => Err(self.err(at, &format!("backreference \\{c} is not supported"))),
            _ => Err(self.err(at, &format!("unknown escape \\{}", c.escape_debug()))),
        }
    }

    /// One class member: `Some(char)` when it can bound a range, `None` after adding `\d` etc.
    fn parse_class_char(&mut self, class: &mut Class) -> Result<Option<char>, String> {
        let at = self.pos;
        self.pos += 1;
        match self.chars.get(at).copied() {
            Some('[') => Err(self.err(at, r"unescaped [ in class; write \[")),
            Some('\\') => match self.parse_escape(at)? {
                Node::Char(c) => Ok(Some(c)),
                Node::Class(perl) => {
                    class.perls.extend(perl.perls);
                    Ok(None)
                }
                _ => Err(self.err(at, r"\b and \B are not allowed in a class")),
            },
            c => Ok(c),
        }
    }

    /// Called with `pos` just past the `[` at `at`.
    fn parse_class(&mut self, at: usize) -> Result<Class, String> {
        let mut class = Class::default();
        if self.peek() == Some('^') {
            class.negated = true;
            self.pos += 1;
        }
        if self.peek() == Some(']') {
            return Err(self.err(at, r"empty class; write \] for a literal ]"));
        }
        loop {
            let item_at = self.pos;
            match self.peek() {
                None => return Err(self.err(at, "unclosed class")),
                Some(']') => break,
                Some(_) => {}
            }
            let Some(lo) = self.parse_class_char(&mut class)? else {
                continue;
            };
            let next_two = (self.peek(), self.chars.get(self.pos + 1));
            if !matches!(next_two, (Some('-'), Some(c)) if *c != ']') {
                class.ranges.push((lo, lo));
                continue;
            }
            self.pos += 1;
            let hi_at = self.pos;
            let Some(hi) = self.parse_class_char(&mut class)? else {
                return Err(self.err(hi_at, r"a range cannot end in \d, \w or \s"));
            };
            if hi < lo {
                let range = format!("{}-{}", lo.escape_debug(), hi.escape_debug());
                return Err(self.err(item_at, &format!("invalid class range {range}")));
            }
            class.ranges.push((lo, hi));
        }
        self.pos += 1;
        Ok(class)
    }

    fn parse_quantifier(&mut self, atom: Node) -> Result<Node, String> {
        let Some(q) = self.peek() else {
            return Ok(atom);
        };
        let (min, max) = match q {
            '*' => (0, None),
            '+' => (1, None),
            '?' => (0, Some(1)),
            '{' => self.parse_counts()?,
            _ => return Ok(atom),
        };
        // `parse_counts` steps past its own `}`; a lazy `?` never changes whether a line matches.
        self.pos += usize::from(q != '{');
        self.pos += usize::from(self.peek() == Some('?'));
        match self.peek() {
            Some('+') => Err(self.err(self.pos, "possessive quantifiers are not supported")),
            Some('*' | '?' | '{') => Err(self.err(
                self.pos,
                "quantifier after a quantifier; wrap the first in (?:...)",
            )),
            _ => Ok(Node::Repeat(Box::new(atom), min, max)),
        }
    }

    /// `{n}`, `{n,}` or `{n,m}`, leaving `pos` past the `}`.
    fn parse_counts(&mut self) -> Result<(u32, Option<u32>), String> {
        let at = self.pos;
        self.pos += 1;
        let min = self.parse_count(at)?;
        let mut max = min;
        if self.peek() == Some(',') {
            self.pos += 1;
            max = self.parse_count(at)?;
        }
        let (Some(min), Some('}')) = (min, self.peek()) else {
            return Err(self.err(at, r"invalid repetition; write \{ for a literal brace"));
        };
        self.pos += 1;
        if max.is_some_and(|max| max < min) {
            return Err(self.err(at, "repetition has min over max"));
        }
        Ok((min, max))
    }

    fn parse_count(&mut self, at: usize) -> Result<Option<u32>, String> {
        let mut count = None;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            let value = count
                .unwrap_or(0u32)
                .saturating_mul(10)
                .saturating_add(digit);
            if value > MAX_REPEAT {
                return Err(self.err(at, &format!("repetition count over {MAX_REPEAT}")));
            }
            count = Some(value);
        }
        Ok(count)
    }
}

/// The longest run of literal chars every match must contain, for the memmem prefilter.
fn required_literal(node: &Node) -> Option<String> {
    let items = match node {
        Node::Concat(items) => items.as_slice(),
        Node::Char(_) => std::slice::from_ref(node),
        _ => return None,
    };
    let (mut best, mut run) = (String::new(), String::new());
    for item in items {
        match item {
            Node::Char(c) => run.push(*c),
            _ => run.clear(),
        }
        if run.len() > best.len() {
            best.clone_from(&run);
        }
    }
    (!best.is_empty()).then_some(best)
}

#[derive(Clone, Debug)]
enum Inst {
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    Split(usize, usize),
    Jump(usize),
    Match,
}

fn compile(node: &Node, ignore_case: bool) -> Result<Program, String> {
    let mut compiler = Compiler {
        insts: Vec::new(),
        work: 0,
        ignore_case,
    };
    compiler.emit(node)?;
    compiler.push(Inst::Match)?;
    Ok(Program {
        insts: compiler.insts,
        ignore_case,
    })
}

struct Compiler {
    insts: Vec<Inst>,
    /// Nodes visited, bounded too: `((){1000}){1000}` emits nothing yet still loops.
    work: usize,
    ignore_case: bool,
}

impl Compiler {
    fn too_large() -> String {
        format!(
            "invalid regex: compiles to over {MAX_INSTS} instructions; lower the repetition counts"
        )
    }

    fn push(&mut self, inst: Inst) -> Result<usize, String> {
        if self.insts.len() >= MAX_INSTS {
            return Err(Self::too_large());
        }
        self.insts.push(inst);
        Ok(self.insts.len() - 1)
    }

    /// Points a placeholder `Split` or `Jump` at the next instruction to be emitted.
    fn patch_here(&mut self, at: usize) {
        let here = self.insts.len();
        if let Inst::Split(_, to) | Inst::Jump(to) = &mut self.insts[at] {
            *to = here;
        }
    }

    fn split_to_next(&mut self) -> Result<usize, String> {
        self.push(Inst::Split(self.insts.len() + 1, 0))
    }

    fn emit(&mut self, node: &Node) -> Result<(), String> {
        self.work += 1;
        if self.work > MAX_INSTS {
            return Err(Self::too_large());
        }
        match node {
            Node::Char(c) => {
                let c = if self.ignore_case { fold(*c) } else { *c };
                self.push(Inst::Char(c))?;
            }
            Node::Any => _ = self.push(Inst::Any)?,
            Node::Class(class) => _ = self.push(Inst::Class(class.clone()))?,
            Node::Look(look) => _ = self.push(Inst::Look(*look))?,
            Node::Concat(items) => items.iter().try_for_each(|item| self.emit(item))?,
            Node::Alt(branches) => {
                let Some((last, rest)) = branches.split_last() else {
                    return Ok(());
                };
                let mut jumps = Vec::new();
                for branch in rest {
                    let split = self.split_to_next()?;
                    self.emit(branch)?;
                    jumps.push(self.push(Inst::Jump(0))?);
                    self.patch_here(split);
                }
                self.emit(last)?;
                jumps.into_iter().for_each(|jump| self.patch_here(jump));
            }
            Node::Repeat(node, min, None) if *min > 0 => {
                // `x{2,}` is `x x+`: the loop body doubles as the last required copy.
                for _ in 1..*min {
                    self.emit(node)?;
                }
                let start = self.insts.len();
                self.emit(node)?;
                self.push(Inst::Split(start, self.insts.len() + 1))?;
            }
            Node::Repeat(node, _, None) => {
                let split = self.split_to_next()?;
                self.emit(node)?;
                self.push(Inst::Jump(split))?;
                self.patch_here(split);
            }
            Node::Repeat(node, min, Some(max)) => {
                for _ in 0..*min {
                    self.emit(node)?;
                }
                let mut splits = Vec::new();
                for _ in *min..*max {
                    splits.push(self.split_to_next()?);
                    self.emit(node)?;
                }
                splits.into_iter().for_each(|split| self.patch_here(split));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
struct Program {
    insts: Vec<Inst>,
    ignore_case: bool,
}

/// Threads alive at one position; `seen` holds a per-step stamp so it never needs clearing.
struct StateSet {
    seen: Vec<u64>,
    stamp: u64,
    stack: Vec<usize>,
}

impl StateSet {
    /// Follows every empty transition from `pc`, queueing consuming insts; true on a match.
    fn add(
        &mut self,
        insts: &[Inst],
        list: &mut Vec<usize>,
        pc: usize,
        around: [Option<char>; 2],
    ) -> bool {
        self.stack.push(pc);
        while let Some(pc) = self.stack.pop() {
            if std::mem::replace(&mut self.seen[pc], self.stamp) == self.stamp {
                continue;
            }
            match &insts[pc] {
                Inst::Match => {
                    self.stack.clear();
                    return true;
                }
                Inst::Split(a, b) => self.stack.extend([*b, *a]),
                Inst::Jump(to) => self.stack.push(*to),
                Inst::Look(look) if look(around[0], around[1]) => self.stack.push(pc + 1),
                Inst::Look(_) => {}
                Inst::Char(_) | Inst::Any | Inst::Class(_) => list.push(pc),
            }
        }
        false
    }
}

impl Program {
    fn is_match(&self, line: &str) -> bool {
        let insts = self.insts.as_slice();
        let mut set = StateSet {
            seen: vec![0; insts.len()],
            stamp: 1,
            stack: Vec::new(),
        };
        let (mut current, mut following) = (Vec::new(), Vec::new());
        let mut chars = line.chars();
        let mut cur = chars.next();
        if set.add(insts, &mut current, 0, [None, cur]) {
            return true;
        }
        while let Some(c) = cur {
            let next = chars.next();
            let folded = if self.ignore_case { fold(c) } else { c };
            set.stamp += 1;
            following.clear();
            for &pc in &current {
                let step = match &insts[pc] {
                    Inst::Char(lit) => *lit == folded,
                    Inst::Class(class) => class.matches(c, self.ignore_case),
                    _ => true,
                };
                if step && set.add(insts, &mut following, pc + 1, [Some(c), next]) {
                    return true;
                }
            }
            // A fresh thread at every position makes the search unanchored.
            if set.add(insts, &mut following, 0, [Some(c), next]) {
                return true;
            }
            std::mem::swap(&mut current, &mut following);
            cur = next;
        }
        false
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[rustfmt::skip]
    const MATCHES: &[(&str, &str, bool)] = &[
        ("abc", "xxabcxx", true), ("abc", "ab c", false), ("héllo", "say héllo", true),
        ("a.c", "aéc", true), ("a.c", "ac", false),
        (r"\.\\\(\)\[\]\{\}\|\*\+\?\^\$\/\-", r".\()[]{}|*+?^$/-", true), (r"a\.b", "axb", false),
        (r"a\tb", "a\tb", true), (r"a\nb", "a\nb", true), ("x]y}", "x]y}", true),
        ("[abc]x", "cx", true), ("[abc]x", "dx", false),
        ("^[a-z0-9_]+$", "foo_42", true), ("^[a-z0-9_]+$", "Foo", false),
        ("[^abc]", "abc", false), ("[^abc]", "abcd", true),
        (r"[\]\-\\]", "-", true), (r"[\]\-\\]", "a", false), ("[a-]", "-", true), ("[-a]", "-", true),
        ("[.$^]", "^", true), (r"[\d]", "7", true), (r"[^\d\s]", "1 2", false),
        (r"[\w.]+@", "a.b@c", true), (r"[\D]", "12", false), (r"[\W]", "ab_", false), (r"[\S]", " \t", false),
        (r"\d+", "abc 123", true), (r"\d", "abc", false), (r"\D", "123", false),
        (r"\w", "é", true), (r"\W", "ab_9", false), (r"\s", "a\tb", true), (r"\S", "   ", false),
        ("^abc", "abcd", true), ("^abc", "xabc", false), ("abc$", "xabc", true), ("abc$", "abcx", false),
        ("^$", "", true), ("^$", "x", false),
        (r"\bfoo\b", "a foo b", true), (r"\bfoo\b", "foobar", false),
        (r"\Boo\B", "foobar", true), (r"\Boo\B", "oo", false),
        ("(ab)+c", "ababc", true), ("(?:ab)+c", "abac", false), ("()", "", true),
        ("x(a|bc)y", "xbcy", true), ("x(a|bc)y", "xby", false),
        ("cat|dog", "hotdog", true), ("cat|dog", "cow", false), ("a|", "zzz", true),
        ("ab*c", "ac", true), ("ab+c", "ac", false), ("ab?c", "abbc", false),
        ("^a{3}$", "aaa", true), ("^a{3}$", "aaaa", false), ("^a{2,}$", "a", false),
        ("^a{2,}$", "aaaaa", true), ("^a{2,3}$", "aaaa", false), ("^a{0}b$", "b", true),
        ("^(ab){1,2}$", "abab", true), ("^a*?b+?c??d{1,2}?$", "bbdd", true),
        ("^a{2}?$", "aa", true), ("^a{2,}?$", "a", false),
    ];

    /// (pattern, regex, ignore_case, line, expected)
    #[rustfmt::skip]
    const FOLDED_AND_FIXED: &[(&str, bool, bool, &str, bool)] = &[
        ("HeLLo", true, true, "say hello", true), ("[A-Z]+$", true, true, "abc", true),
        ("[a-z]", true, true, "ABC", true), ("[^a]", true, true, "A", false),
        ("ÉCOLE", true, true, "une école", true), ("école", true, false, "ÉCOLE", false),
        ("a.b(", false, false, "x a.b( y", true), ("a.b(", false, false, "axb(", false),
        ("ÉCOLE", false, true, "une école", true), ("Error", false, true, "ERROR: x", true),
        ("Error", false, false, "ERROR: x", false),
    ];

    #[rustfmt::skip]
    const ERRORS: &[(&str, &str)] = &[
        ("", "empty pattern"),
        ("ab(cd", "invalid regex at char 3: unclosed group"),
        ("ab)", "invalid regex at char 3: unmatched )"),
        ("a[bc", "invalid regex at char 2: unclosed class"),
        ("[]a]", r"invalid regex at char 1: empty class; write \] for a literal ]"),
        ("x[z-a]", "invalid regex at char 3: invalid class range z-a"),
        (r"[a-\d]", r"invalid regex at char 4: a range cannot end in \d, \w or \s"),
        ("[[:alpha:]]", r"invalid regex at char 2: unescaped [ in class; write \["),
        (r"[\b]", r"invalid regex at char 2: \b and \B are not allowed in a class"),
        ("*a", "invalid regex at char 1: nothing to repeat before *"),
        ("a|+", "invalid regex at char 3: nothing to repeat before +"),
        ("{2}", r"invalid regex at char 1: nothing to repeat before {; write \{"),
        ("a**", "invalid regex at char 3: quantifier after a quantifier; wrap the first in (?:...)"),
        ("a{2}{3}", "invalid regex at char 5: quantifier after a quantifier; wrap the first in (?:...)"),
        ("a*+", "invalid regex at char 3: possessive quantifiers are not supported"),
        ("a?+", "invalid regex at char 3: possessive quantifiers are not supported"),
        ("a{x}", r"invalid regex at char 2: invalid repetition; write \{ for a literal brace"),
        ("a{2", r"invalid regex at char 2: invalid repetition; write \{ for a literal brace"),
        ("a{,2}", r"invalid regex at char 2: invalid repetition; write \{ for a literal brace"),
        ("a{2,,}", r"invalid regex at char 2: invalid repetition; write \{ for a literal brace"),
        ("a{3,2}", "invalid regex at char 2: repetition has min over max"),
        ("a{1001}", "invalid regex at char 2: repetition count over 1000"),
        ("a{1,99999999999}", "invalid regex at char 2: repetition count over 1000"),
        ("(a{1000}){1000}", "invalid regex: compiles to over 100000 instructions; lower the repetition counts"),
        ("((){1000}){1000}", "invalid regex: compiles to over 100000 instructions; lower the repetition counts"),
        (r"(a)\1", r"invalid regex at char 4: backreference \1 is not supported"),
        ("a(?=b)", "invalid regex at char 2: lookahead (?= (?! is not supported"),
        ("a(?!b)", "invalid regex at char 2: lookahead (?= (?! is not supported"),
        ("(?<=a)b", "invalid regex at char 1: lookbehind (?<= (?<! is not supported"),
        ("(?<!a)b", "invalid regex at char 1: lookbehind (?<= (?<! is not supported"),
        ("(?<n>a)", "invalid regex at char 1: named groups are not supported; use (?:...)"),
        ("(?P<n>a)", "invalid regex at char 1: named groups are not supported; use (?:...)"),
        ("(?>a)", "invalid regex at char 1: atomic groups (?> are not supported"),
        ("(?i)x", "invalid regex at char 1: inline flags (?...) are not supported; use ignore_case"),
        (r"a\q", r"invalid regex at char 2: unknown escape \q"),
        (r"\é", r"invalid regex at char 1: unknown escape \é"),
        ("a\\\n", r"invalid regex at char 2: unknown escape \\n"),
        ("ab\\", "invalid regex at char 3: trailing backslash"),
    ];

    fn compile(pattern: &str, regex: bool, ignore_case: bool) -> Pattern {
        Pattern::new(pattern, regex, ignore_case).unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
    }

    #[test]
    fn each_construct_matches_as_documented() {
        for &(pattern, line, expected) in MATCHES {
            let matched = compile(pattern, true, false).is_match(line);
            assert_eq!(matched, expected, "{pattern:?} on {line:?}");
        }
        for &(pattern, regex, ignore_case, line, expected) in FOLDED_AND_FIXED {
            let matched = compile(pattern, regex, ignore_case).is_match(line);
            assert_eq!(matched, expected, "{pattern:?} on {line:?}");
        }
    }

    #[test]
    fn errors_name_the_construct_and_position() {
        for &(pattern, expected) in ERRORS {
            let error = Pattern::new(pattern, true, false).err();
            assert_eq!(error.as_deref(), Some(expected), "{pattern:?}");
        }
        assert_eq!(
            Pattern::new("", false, true).err().as_deref(),
            Some("empty pattern")
        );
        let deep = Pattern::new(&"(".repeat(100_000), true, false).err();
        let expected = "invalid regex at char 201: groups nested deeper than 200";
        assert_eq!(deep.as_deref(), Some(expected));
    }

    #[test]
    fn pathological_patterns_stay_linear() {
        let line = "a".repeat(100_000);
        for pattern in ["(a*)*b", "(a|a)*c", "(a?){30}a{30}b", "^(a+)+$", r"(a*)*\d"] {
            let compiled = compile(pattern, true, false);
            // Run the NFA itself: the memmem prefilter would reject most of these lines first.
            let program = compiled.program.as_ref().expect("a regex has a program");
            let expected = pattern == "^(a+)+$";
            assert_eq!(program.is_match(&line), expected, "{pattern}");
            assert_eq!(compiled.is_match(&line), expected, "{pattern}");
        }
    }

    /// Reference semantics straight off the syntax tree: every end position reachable from
    /// `from`, explored exhaustively with sets instead of an NFA.
    fn ends(node: &Node, s: &[char], ic: bool, from: BTreeSet<usize>) -> BTreeSet<usize> {
        let step = |ok: &dyn Fn(char) -> bool| {
            let can_step = |i: &&usize| s.get(**i).is_some_and(|&c| ok(c));
            from.iter().filter(can_step).map(|i| i + 1).collect()
        };
        match node {
            Node::Char(lit) => step(&|c| if ic { fold(c) == fold(*lit) } else { c == *lit }),
            Node::Any => step(&|_| true),
            Node::Class(class) => step(&|c| class.matches(c, ic)),
            Node::Look(look) => {
                let holds = |&i: &usize| look(i.checked_sub(1).map(|j| s[j]), s.get(i).copied());
                from.into_iter().filter(holds).collect()
            }
            Node::Concat(items) => items.iter().fold(from, |at, item| ends(item, s, ic, at)),
            Node::Alt(branches) => branches
                .iter()
                .flat_map(|b| ends(b, s, ic, from.clone()))
                .collect(),
            Node::Repeat(inner, min, max) => {
                let required = (0..*min).fold(from, |at, _| ends(inner, s, ic, at));
                // A position first reached after fewer extra rounds has the most budget left.
                let (mut all, mut frontier, mut extra) = (required.clone(), required, 0);
                while !frontier.is_empty() && max.is_none_or(|max| extra < max - min) {
                    frontier = ends(inner, s, ic, frontier)
                        .difference(&all)
                        .copied()
                        .collect();
                    all.extend(&frontier);
                    extra += 1;
                }
                all
            }
        }
    }

    struct XorShift(u64);

    impl XorShift {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn join(&mut self, tokens: &[&str], max_len: usize) -> String {
            (0..self.below(max_len + 1))
                .map(|_| tokens[self.below(tokens.len())])
                .collect()
        }
    }

    /// Random patterns from a small alphabet plus junk that must be rejected without a panic.
    #[rustfmt::skip]
    const TOKENS: &[&str] = &[
        "a", "b", "a", "b", "A", " ", ".", "*", "+", "?", "|", "(", ")", "(", ")", "(?:", "^", "$",
        "[ab]", "[^a]", "[a-b ]", r"\b", r"\B", r"\w", r"\S", "{2}", "{1,}", "{0,2}", "*?",
        "[", "]", "{", "}", "\\", "-", "é", "İ", "(?", "(?<", r"\q", r"\1", "{9999}",
    ];

    #[test]
    fn random_patterns_agree_with_reference() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let (mut matched, mut unmatched, mut rejected) = (0, 0, 0);
        for round in 0..20_000 {
            let text = rng.join(TOKENS, 6);
            let ic = round % 3 == 0;
            let (Ok(pattern), Ok(node)) = (Pattern::new(&text, true, ic), parse(&text)) else {
                rejected += 1;
                continue;
            };
            let fixed = compile(&text, false, ic);
            for _ in 0..3 {
                let line = rng.join(&["a", "b", "A", " ", "é", "İ"], 8);
                let chars: Vec<char> = line.chars().collect();
                let expected = !ends(&node, &chars, ic, (0..=chars.len()).collect()).is_empty();
                assert_eq!(
                    pattern.is_match(&line),
                    expected,
                    "{text:?} on {line:?}, ic {ic}"
                );
                *(if expected {
                    &mut matched
                } else {
                    &mut unmatched
                }) += 1;
                let (hay, needle) = match ic {
                    true => (fold_str(&line), fold_str(&text)),
                    false => (line.clone(), text.clone()),
                };
                assert_eq!(
                    fixed.is_match(&line),
                    hay.contains(&needle),
                    "fixed {text:?}"
                );
            }
        }
        let counts = format!("matched {matched}, unmatched {unmatched}, rejected {rejected}");
        assert!(
            matched > 3000 && unmatched > 3000 && rejected > 2000,
            "{counts}"
        );
        eprintln!("{counts}");
    }
}
