//! JSON that keeps key order, duplicate keys and number text: parsing, writing, and the lossless
//! agent form of JSON tool output (SPEC §4.2), where arrays of uniform objects become tables.
//! It never drops, reorders or rewrites a value; input it cannot represent exactly is an error.

use std::fmt;

/// Deeper input is an error rather than a stack overflow.
const MAX_DEPTH: usize = 512;
/// Fewer rows than this stay objects: a header would cost more than it saves.
const MIN_TABLE_ROWS: usize = 3;
const TABLE_OPEN: &[u8] = b"[table ";
const JSONL_OPEN: &[u8] = b"[jsonl ";
const ROWS_LABEL: &[u8] = b" rows: ";

/// A JSON value. Numbers keep their exact lexeme and objects keep their members in input order,
/// duplicates included, so writing a parsed value reproduces every key and number as it was.
/// A `Number` built by hand must hold a valid JSON number; it is written as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// Where and why a text is not JSON. `offset` is a byte offset into the parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses one JSON document (RFC 8259, strictly): the whole input, whitespace allowed around it.
/// No byte-order mark, no comments, no trailing commas, no leading zeros, no NaN. A `\u` escape
/// of a lone surrogate is rejected, since a Rust string cannot hold it and replacing it would
/// change the data. Nesting deeper than 512 arrays/objects is an error.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    Parser::new(text, false).document()
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(s.to_owned())
    }

    pub fn int(n: i64) -> Value {
        Value::Number(n.to_string())
    }

    pub fn uint(n: u64) -> Value {
        Value::Number(n.to_string())
    }

    /// An empty object, to fill with `set`.
    pub fn object() -> Value {
        Value::Object(Vec::new())
    }

    /// The value of the first member named `key`, if this is an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Replaces the first member named `key` where it stands, or appends one. No-op on
    /// anything but an object.
    pub fn set(&mut self, key: &str, v: Value) {
        if let Some(members) = self.as_object_mut() {
            match members.iter_mut().find(|(k, _)| k == key) {
                Some(member) => member.1 = v,
                None => members.push((key.to_owned(), v)),
            }
        }
    }

    /// Removes the first member named `key` and returns its value; later duplicates stay.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let members = self.as_object_mut()?;
        let at = members.iter().position(|(k, _)| k == key)?;
        Some(members.remove(at).1)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as an i64 when its lexeme is an integer that fits (`1.0` and `1e3` are not).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The number as a u64 when its lexeme is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) if !n.starts_with('-') => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Vec<(String, Value)>> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    /// Minified JSON: original number lexemes, strings escaped minimally (see `write_string`).
    pub fn to_compact(&self) -> String {
        let mut out = String::new();
        write_compact(&mut out, self);
        out
    }

    /// Indented JSON (two spaces, `"key": value`), for config files a person may read.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        write_pretty(&mut out, self, 0);
        out
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_compact())
    }
}

/// Appends `s` as a JSON string literal, quotes included. Only `"`, `\` and control characters
/// are escaped (`\n \t \r \b \f`, else `\u00XX`); everything else, non-ASCII too, stays as is.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut copied = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `b` is ASCII, so `i` is a char boundary.
        out.push_str(&s[copied..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        } else {
            out.push_str(escape);
        }
        copied = i + 1;
    }
    out.push_str(&s[copied..]);
    out.push('"');
}

fn write_compact(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (n, (key, value)) in members.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_compact(out, value);
            }
            out.push('}');
        }
    }
}

fn write_pretty(out: &mut String, v: &Value, level: usize) {
    fn newline(out: &mut String, level: usize) {
        out.push('\n');
        for _ in 0..level {
            out.push_str("  ");
        }
    }
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                newline(out, level + 1);
                write_pretty(out, item, level + 1);
            }
            newline(out, level);
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push('{');
            for (n, (key, value)) in members.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                newline(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_pretty(out, value, level + 1);
            }
            newline(out, level);
            out.push('}');
        }
        _ => write_compact(out, v),
    }
}

// ---------------------------------------------------------------------------------------------
// The agent form

/// Rewrites JSON tool output for an agent without losing any information (this runs even when
/// the original cannot be stored). Returns `None` when `text` is not a JSON object or array (or
/// JSON Lines, below), or when the result would not be shorter than the trimmed input.
///
/// The agent form is compact JSON (no whitespace, numbers and keys as in the input, every value
/// kept, `null` included) except that an array of at least three objects with the same key
/// sequence becomes a table where that makes the whole output shorter (values inside a table
/// are plain compact JSON, so a table is weighed against the tables it would hide; ties stay
/// JSON). The table sits on its own lines where the array was:
///
/// ```text
/// {"kind":"List","items":
/// [table 3 rows: id,name,tags]
/// 1,"alice",["a","b"]
/// 2,"bob",null
/// 3,"carol",[]
/// ,"total":3}
/// ```
///
/// - The header gives the row count and the keys in order. A key made only of ASCII letters,
///   digits and `_-.$@/:` is written bare; any other key is a JSON string literal.
/// - Each row is one line: the values, in key order, as compact JSON literals separated by `,`.
///   Strings are quoted and escaped, so a value never contains a raw newline and its commas are
///   inside quotes or brackets. Values inside a table are plain compact JSON (no nested tables).
/// - Outside tables the form has no newlines, so every newline belongs to a table: one before
///   the header, one before each row, one after the last row (none at the very start or end of
///   the output). The line after a table continues the enclosing JSON, with `,`, `]` or `}`.
/// - Tables are applied recursively to arrays nested in objects and arrays outside tables.
/// - The choice is by bytes, computed exactly in one sizing pass before writing: deterministic.
///
/// JSON Lines (at least three lines, each one object, all with the same key sequence) becomes
/// one table with a `[jsonl N rows: …]` header and the same rows; other JSON Lines give `None`.
///
/// `decode_agent_form` reads the form back.
pub fn compact_for_agent(text: &str) -> Option<String> {
    let trimmed = text.trim_matches(is_json_whitespace);
    if !matches!(trimmed.as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    // Two passes over the text, one sizing and one writing, and no tree of the document: a
    // huge output costs little more than itself and its agent form.
    let mut tables = Vec::new();
    let out = match Parser::new(trimmed, false).plan_document(&mut tables) {
        Ok(sized) => {
            // A table at the top level is written with a newline at either end, cut below.
            if sized.agent >= trimmed.len() + 2 {
                return None;
            }
            let mut out = String::with_capacity(sized.agent);
            let mut tables = tables.into_iter().peekable();
            Parser::new(trimmed, false)
                .write_value(&mut out, Some(&mut tables))
                .ok()?;
            if out.starts_with('\n') {
                out.pop();
                out.remove(0);
            }
            out
        }
        Err(_) => json_lines_table(trimmed)?,
    };
    (out.len() < trimmed.len()).then_some(out)
}

/// Reads the agent form back: one value for a JSON document, one per line for a `[jsonl …]`
/// table. Plain JSON is accepted too, so `decode_agent_form(x)` equals `parse(x)` for any JSON
/// text.
pub fn decode_agent_form(text: &str) -> Result<Vec<Value>, ParseError> {
    let mut parser = Parser::new(text, true);
    if !text.as_bytes().starts_with(JSONL_OPEN) {
        return Ok(vec![parser.document()?]);
    }
    let (rows, keys) = parser.table_header(JSONL_OPEN)?;
    let lines = parser.table_rows(rows, &keys, 1)?;
    parser.skip_whitespace();
    if parser.pos != parser.bytes.len() {
        return parser.fail("unexpected text after the table");
    }
    Ok(lines)
}

fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// What the sizing pass learns of one value: its length written compact and in the agent
/// form, and an object's keys in order.
struct Sized {
    compact: usize,
    agent: usize,
    keys: Option<Vec<String>>,
}

/// An array the agent form writes as a table: where it starts in the text, and its header.
type Table = (usize, String);

/// The tables still to write, in the order of the text.
type Tables = std::iter::Peekable<std::vec::IntoIter<Table>>;

/// A scalar's length written compact.
fn scalar_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.len(),
        Value::String(s) => quoted_len(s),
        other => other.to_compact().len(),
    }
}

/// `[table N rows: k1,k2]`, or `[jsonl …` with that `open`.
fn table_header(open: &[u8], rows: usize, keys: &[String]) -> String {
    let mut header = String::new();
    header.extend(open.iter().map(|&b| b as char));
    header.push_str(&rows.to_string());
    header.extend(ROWS_LABEL.iter().map(|&b| b as char));
    for (n, key) in keys.iter().enumerate() {
        if n > 0 {
            header.push(',');
        }
        if is_bare_key(key) {
            header.push_str(key);
        } else {
            write_string(&mut header, key);
        }
    }
    header.push(']');
    header
}

fn is_bare_key(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(is_bare_key_byte)
}

fn is_bare_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@' | b'/' | b':')
}

/// The length of `s` written by `write_string`.
fn quoted_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// JSON Lines as one table, line by line: a first pass checks that every line is an object
/// with the same keys, a second writes the rows.
fn json_lines_table(text: &str) -> Option<String> {
    let mut keys: Option<Vec<String>> = None;
    let mut rows = 0;
    let mut nested = Vec::new();
    for line in text.split('\n') {
        let mut line = Parser::new(line, false);
        line.skip_whitespace();
        if line.peek() != Some(b'{') {
            return None;
        }
        let sized = line.plan_document(&mut nested).ok()?;
        nested.clear();
        match (&keys, sized.keys) {
            (None, Some(first)) if !first.is_empty() => keys = Some(first),
            (Some(first), Some(these)) if *first == these => {}
            _ => return None,
        }
        rows += 1;
    }
    if rows < MIN_TABLE_ROWS {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&table_header(JSONL_OPEN, rows, &keys?));
    for line in text.split('\n') {
        let mut line = Parser::new(line, false);
        line.skip_whitespace();
        out.push('\n');
        line.write_row(&mut out).ok()?;
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// The parser

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Accept agent-form tables in value positions (decoding only).
    tables: bool,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, tables: bool) -> Parser<'a> {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            tables,
        }
    }

    fn fail<T>(&self, message: &'static str) -> Result<T, ParseError> {
        Err(ParseError {
            offset: self.pos,
            message,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8, message: &'static str) -> Result<(), ParseError> {
        if self.peek() != Some(byte) {
            return self.fail(message);
        }
        self.pos += 1;
        Ok(())
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn document(&mut self) -> Result<Value, ParseError> {
        self.skip_whitespace();
        let doc = self.value(0)?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return self.fail("unexpected text after the document");
        }
        Ok(doc)
    }

    /// A value whose enclosing containers are `depth` deep.
    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            None => self.fail("unexpected end of input"),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') if self.tables && self.bytes[self.pos..].starts_with(TABLE_OPEN) => {
                self.table(depth + 1)
            }
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.fail("expected a value"),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, ParseError> {
        if !self.bytes[self.pos..].starts_with(word.as_bytes()) {
            return self.fail("invalid literal");
        }
        self.pos += word.len();
        Ok(v)
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return self.fail("nested deeper than 512 levels");
        }
        let mut members = Vec::new();
        self.each_member(b'}', |p, _| {
            members.push((p.key()?, p.value(depth)?));
            Ok(())
        })?;
        // A tree of many small objects would otherwise hold a fifth of itself as spare room.
        members.shrink_to_fit();
        Ok(Value::Object(members))
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return self.fail("nested deeper than 512 levels");
        }
        let mut items = Vec::new();
        self.each_member(b']', |p, _| {
            items.push(p.value(depth)?);
            Ok(())
        })?;
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    /// Walks the members of the array or object at `pos`, `close` being its closing bracket:
    /// `each` gets the parser at the start of each member (a value, or a key) and its index.
    /// Returns how many there were.
    fn each_member(
        &mut self,
        close: u8,
        mut each: impl FnMut(&mut Self, usize) -> Result<(), ParseError>,
    ) -> Result<usize, ParseError> {
        let (trailing, expected) = if close == b']' {
            (
                "trailing comma in an array",
                "expected ',' or ']' in an array",
            )
        } else {
            (
                "trailing comma in an object",
                "expected ',' or '}' in an object",
            )
        };
        self.pos += 1;
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(0);
        }
        let mut n = 0;
        loop {
            if self.peek() == Some(close) {
                return self.fail(trailing);
            }
            each(self, n)?;
            n += 1;
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(n);
                }
                _ => return self.fail(expected),
            }
            self.skip_whitespace();
        }
    }

    /// An object member's key and the colon after it.
    fn key(&mut self) -> Result<String, ParseError> {
        if self.peek() != Some(b'"') {
            return self.fail("expected a string key");
        }
        let key = self.string()?;
        self.skip_whitespace();
        self.expect(b':', "expected ':' after an object key")?;
        self.skip_whitespace();
        Ok(key)
    }

    /// The sizing pass over a whole document (see [`Parser::plan`]).
    fn plan_document(&mut self, tables: &mut Vec<Table>) -> Result<Sized, ParseError> {
        self.skip_whitespace();
        let sized = self.plan(0, tables)?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return self.fail("unexpected text after the document");
        }
        Ok(sized)
    }

    /// Sizes the value at `pos` both ways, bottom up, and notes in `tables`, in the order of
    /// the text, each array that is shorter written as a table than as objects. A table's
    /// values are compact JSON, so a table is weighed against any tables nested in its rows,
    /// and those are dropped when it wins. Checks the text as [`Parser::value`] does.
    fn plan(&mut self, depth: usize, tables: &mut Vec<Table>) -> Result<Sized, ParseError> {
        let depth = depth + 1;
        let open = self.peek();
        if matches!(open, Some(b'[' | b'{')) && depth > MAX_DEPTH {
            return self.fail("nested deeper than 512 levels");
        }
        let (mut compact, mut agent) = (2, 2);
        match open {
            Some(b'[') => {
                let start = self.pos;
                let nested = tables.len();
                // The keys of the first item, while every item is an object with those keys.
                let mut shared: Option<Vec<String>> = None;
                let mut uniform = true;
                let rows = self.each_member(b']', |p, n| {
                    let item = p.plan(depth, tables)?;
                    compact += item.compact + usize::from(n > 0);
                    agent += item.agent + usize::from(n > 0);
                    uniform &= match (item.keys, &shared) {
                        (Some(keys), None) if n == 0 && !keys.is_empty() => {
                            shared = Some(keys);
                            true
                        }
                        (Some(keys), Some(first)) => keys == *first,
                        _ => false,
                    };
                    Ok(())
                })?;
                if let Some(keys) = shared.filter(|_| uniform && rows >= MIN_TABLE_ROWS) {
                    // Each row loses its braces, quoted keys and colons, and gains a newline.
                    let separators = rows - 1;
                    let keys_and_colons: usize = keys.iter().map(|k| quoted_len(k) + 1).sum();
                    let values = compact - 2 - separators - rows * (2 + keys_and_colons);
                    let header = table_header(TABLE_OPEN, rows, &keys);
                    let as_table = 1 + header.len() + rows + values + 1;
                    if as_table < agent {
                        tables.truncate(nested);
                        tables.push((start, header));
                        agent = as_table;
                    }
                }
                Ok(Sized {
                    compact,
                    agent,
                    keys: None,
                })
            }
            Some(b'{') => {
                let mut keys = Vec::new();
                self.each_member(b'}', |p, n| {
                    let key = p.key()?;
                    let value = p.plan(depth, tables)?;
                    let key_len = quoted_len(&key) + 1;
                    compact += usize::from(n > 0) + key_len + value.compact;
                    // The agent form writes `"key": value`, as pretty printers do, so a fact
                    // quoted from pretty-printed output still matches.
                    agent += usize::from(n > 0) + key_len + 1 + value.agent;
                    keys.push(key);
                    Ok(())
                })?;
                Ok(Sized {
                    compact,
                    agent,
                    keys: Some(keys),
                })
            }
            _ => {
                let len = scalar_len(&self.value(depth)?);
                Ok(Sized {
                    compact: len,
                    agent: len,
                    keys: None,
                })
            }
        }
    }

    /// The writing pass: the value at `pos`, checked by [`Parser::plan`], in the agent form
    /// with the arrays `tables` names as tables, or compact (as [`write_compact`] writes a
    /// parsed value) when there are no `tables`.
    fn write_value(
        &mut self,
        out: &mut String,
        mut tables: Option<&mut Tables>,
    ) -> Result<(), ParseError> {
        let at = self.pos;
        match self.peek() {
            Some(b'[') => {
                let table = tables
                    .as_mut()
                    .and_then(|t| t.next_if(|(start, _)| *start == at));
                if let Some((_, header)) = table {
                    out.push('\n');
                    out.push_str(&header);
                    self.each_member(b']', |p, _| {
                        out.push('\n');
                        p.write_row(out)
                    })?;
                    out.push('\n');
                    return Ok(());
                }
                out.push('[');
                self.each_member(b']', |p, n| {
                    if n > 0 {
                        out.push(',');
                    }
                    p.write_value(out, tables.as_deref_mut())
                })?;
                out.push(']');
            }
            Some(b'{') => {
                // The agent form writes `"key": value`, as pretty printers do.
                let colon = if tables.is_some() { ": " } else { ":" };
                out.push('{');
                self.each_member(b'}', |p, n| {
                    if n > 0 {
                        out.push(',');
                    }
                    write_string(out, &p.key()?);
                    out.push_str(colon);
                    p.write_value(out, tables.as_deref_mut())
                })?;
                out.push('}');
            }
            _ => write_compact(out, &self.value(0)?),
        }
        Ok(())
    }

    /// A table row: the values of the object at `pos`, compact, separated by commas.
    fn write_row(&mut self, out: &mut String) -> Result<(), ParseError> {
        if self.peek() != Some(b'{') {
            return self.fail("expected an object");
        }
        self.each_member(b'}', |p, n| {
            if n > 0 {
                out.push(',');
            }
            p.key()?;
            p.write_value(out, None)
        })?;
        Ok(())
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return self.fail("leading zero in a number");
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return self.fail("expected a digit"),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail("expected a digit after '.'");
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail("expected a digit in the exponent");
            }
            self.digits();
        }
        Ok(Value::Number(self.text[start..self.pos].to_owned()))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let start = self.pos;
        // Most strings have no escapes: one scan and one copy.
        loop {
            match self.peek() {
                Some(b'"') => {
                    let s = self.text[start..self.pos].to_owned();
                    self.pos += 1;
                    return Ok(s);
                }
                Some(b'\\') => break,
                Some(0x00..=0x1f) => return self.fail("control character in a string"),
                Some(_) => self.pos += 1,
                None => return self.fail("unterminated string"),
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(&self.text[start..self.pos]);
        loop {
            let run = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[run..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => return self.fail("control character in a string"),
                None => return self.fail("unterminated string"),
            }
        }
    }

    /// One escape sequence starting at the backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let c = match self.bytes.get(self.pos + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(out),
            _ => return self.fail("invalid escape in a string"),
        };
        out.push(c);
        self.pos += 2;
        Ok(())
    }

    fn unicode_escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let high = self.hex4(self.pos + 2)?;
        let code = match high {
            0xd800..=0xdbff => {
                let rest = &self.bytes[self.pos + 6..];
                if !rest.starts_with(b"\\u") {
                    return self.fail("lone surrogate in a \\u escape");
                }
                let low = self.hex4(self.pos + 8)?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return self.fail("lone surrogate in a \\u escape");
                }
                self.pos += 6;
                0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
            }
            0xdc00..=0xdfff => return self.fail("lone surrogate in a \\u escape"),
            _ => high,
        };
        match char::from_u32(code) {
            Some(c) => out.push(c),
            None => return self.fail("invalid \\u escape"),
        }
        self.pos += 6;
        Ok(())
    }

    /// Four hex digits at `at`; an error points at the first of them.
    fn hex4(&self, at: usize) -> Result<u32, ParseError> {
        let invalid = ParseError {
            offset: at,
            message: "invalid \\u escape",
        };
        let digits = self.bytes.get(at..at + 4).ok_or(invalid.clone())?;
        digits.iter().try_fold(0, |code, &b| {
            let digit = (b as char).to_digit(16).ok_or(invalid.clone())?;
            Ok(code * 16 + digit)
        })
    }

    fn table(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return self.fail("nested deeper than 512 levels");
        }
        let (rows, keys) = self.table_header(TABLE_OPEN)?;
        Ok(Value::Array(self.table_rows(rows, &keys, depth)?))
    }

    /// `[table N rows: k1,k2]` (or `[jsonl …`), up to the closing bracket.
    fn table_header(&mut self, open: &[u8]) -> Result<(usize, Vec<String>), ParseError> {
        self.pos += open.len();
        let count_start = self.pos;
        let mut rows: usize = 0;
        while let Some(b @ b'0'..=b'9') = self.peek() {
            rows = match rows
                .checked_mul(10)
                .and_then(|r| r.checked_add(usize::from(b - b'0')))
            {
                Some(r) => r,
                None => return self.fail("row count too large"),
            };
            self.pos += 1;
        }
        if self.pos == count_start {
            return self.fail("expected a row count");
        }
        if !self.bytes[self.pos..].starts_with(ROWS_LABEL) {
            return self.fail("expected ' rows: ' in a table header");
        }
        self.pos += ROWS_LABEL.len();
        let mut keys = Vec::new();
        loop {
            if self.peek() == Some(b'"') {
                keys.push(self.string()?);
            } else {
                let start = self.pos;
                while self.peek().is_some_and(is_bare_key_byte) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return self.fail("expected a key in a table header");
                }
                keys.push(self.text[start..self.pos].to_owned());
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok((rows, keys));
                }
                _ => return self.fail("expected ',' or ']' in a table header"),
            }
        }
    }

    /// `rows` lines of compact values after a header, each line starting with its newline.
    fn table_rows(
        &mut self,
        rows: usize,
        keys: &[String],
        depth: usize,
    ) -> Result<Vec<Value>, ParseError> {
        let tables = std::mem::replace(&mut self.tables, false);
        // A corrupt count must not reserve memory the input cannot fill.
        let mut items = Vec::with_capacity(rows.min(self.bytes.len() - self.pos));
        for _ in 0..rows {
            self.expect(b'\n', "expected a newline before a table row")?;
            let mut members = Vec::with_capacity(keys.len());
            for (n, key) in keys.iter().enumerate() {
                if n > 0 {
                    self.expect(b',', "expected ',' between table cells")?;
                }
                members.push((key.clone(), self.value(depth)?));
            }
            items.push(Value::Object(members));
        }
        if !matches!(self.peek(), None | Some(b'\n')) {
            return self.fail("expected a newline after a table row");
        }
        self.tables = tables;
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{Arbitrary, Gen, QuickCheck};

    fn err(text: &str) -> (usize, &'static str) {
        let e = parse(text).unwrap_err();
        (e.offset, e.message)
    }

    #[test]
    fn round_trip_keeps_key_order_and_number_lexemes() {
        let text = r#"{"z":1.0,"a":1e5,"m":-0,"big":12345678901234567890,"e":1E-7,"f":-0.50e+03}"#;
        let v = parse(text).unwrap();
        assert_eq!(v.to_compact(), text);
        let keys: Vec<&str> = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["z", "a", "m", "big", "e", "f"]);
        assert_eq!(
            v.get("big"),
            Some(&Value::Number("12345678901234567890".into()))
        );
    }

    #[test]
    fn whitespace_is_dropped_and_duplicates_kept() {
        let v = parse(" \r\n\t{ \"a\" : [ 1 , 2 ] , \"a\" : { } , \"b\" : [ ] }\n").unwrap();
        assert_eq!(v.to_compact(), r#"{"a":[1,2],"a":{},"b":[]}"#);
        assert_eq!(
            v.get("a"),
            Some(&Value::Array(vec![Value::int(1), Value::int(2)]))
        );
    }

    #[test]
    fn escapes_are_decoded_and_written_minimally() {
        let v = parse(r#""q\" b\\ s\/ \b\f\n\r\t \u0001\u001F \u00e9 \u20AC é""#).unwrap();
        assert_eq!(
            v.as_str(),
            Some("q\" b\\ s/ \u{8}\u{c}\n\r\t \u{1}\u{1f} é € é")
        );
        assert_eq!(
            v.to_compact(),
            r#""q\" b\\ s/ \b\f\n\r\t \u0001\u001f é € é""#
        );
        let mut out = String::new();
        write_string(&mut out, "\u{7f}\u{2028}😀");
        assert_eq!(out, "\"\u{7f}\u{2028}😀\"");
    }

    #[test]
    fn surrogate_pairs_decode_to_one_char() {
        let v = parse(r#"["\ud83d\ude00","\uD83D\uDE00x"]"#).unwrap();
        assert_eq!(v.to_compact(), r#"["😀","😀x"]"#);
    }

    #[test]
    fn lone_surrogates_are_rejected() {
        assert_eq!(err(r#""\ud83d""#), (1, "lone surrogate in a \\u escape"));
        assert_eq!(err(r#""ab\ude00""#), (3, "lone surrogate in a \\u escape"));
        assert_eq!(
            err(r#""\ud83d\u0041""#),
            (1, "lone surrogate in a \\u escape")
        );
        assert_eq!(err(r#""\ud83dx""#), (1, "lone surrogate in a \\u escape"));
        assert_eq!(err(r#""\ud83d\u12"#), (9, "invalid \\u escape"));
        assert_eq!(err(r#""\u00g0""#), (3, "invalid \\u escape"));
    }

    #[test]
    fn invalid_inputs_are_rejected_with_offsets() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "unexpected end of input"),
            ("  ", 2, "unexpected end of input"),
            ("[1,2,]", 5, "trailing comma in an array"),
            (r#"{"a":1,}"#, 7, "trailing comma in an object"),
            (r#"{"a":1 , }"#, 9, "trailing comma in an object"),
            ("[1 2]", 3, "expected ',' or ']' in an array"),
            (r#"{"a" 1}"#, 5, "expected ':' after an object key"),
            ("{a:1}", 1, "expected a string key"),
            ("{,}", 1, "expected a string key"),
            ("[,1]", 1, "expected a value"),
            ("01", 1, "leading zero in a number"),
            ("-01", 2, "leading zero in a number"),
            ("1.", 2, "expected a digit after '.'"),
            (".5", 0, "expected a value"),
            ("+1", 0, "expected a value"),
            ("-", 1, "expected a digit"),
            ("1e", 2, "expected a digit in the exponent"),
            ("1e+", 3, "expected a digit in the exponent"),
            ("NaN", 0, "expected a value"),
            ("tru", 0, "invalid literal"),
            ("nul", 0, "invalid literal"),
            ("\"abc", 4, "unterminated string"),
            ("\"a\\", 2, "invalid escape in a string"),
            (r#""\x""#, 1, "invalid escape in a string"),
            ("\"a\nb\"", 2, "control character in a string"),
            ("\"a\\n\tb\"", 4, "control character in a string"),
            (r#""a"x"#, 3, "unexpected text after the document"),
            ("[1]]", 3, "unexpected text after the document"),
            ("{} {}", 3, "unexpected text after the document"),
            ("\u{feff}{}", 0, "expected a value"),
            ("[1,", 3, "unexpected end of input"),
            (r#"{"a":"#, 5, "unexpected end of input"),
        ];
        for &(text, offset, message) in cases {
            assert_eq!(err(text), (offset, message), "input {text:?}");
        }
        assert_eq!(
            parse("[1,]").unwrap_err().to_string(),
            "invalid JSON at byte 3: trailing comma in an array"
        );
    }

    #[test]
    fn nesting_is_limited_to_512_levels() {
        let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
        assert!(parse(&ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(513), "]".repeat(513));
        assert_eq!(err(&too_deep), (512, "nested deeper than 512 levels"));
        let objects = format!("{}1{}", r#"{"a":"#.repeat(600), "}".repeat(600));
        assert_eq!(err(&objects).1, "nested deeper than 512 levels");
        // Far beyond any stack: must be an error, not an overflow.
        assert!(parse(&"[".repeat(1_000_000)).is_err());
        assert!(decode_agent_form(&"[".repeat(1_000_000)).is_err());
        assert!(compact_for_agent(&"[{\"a\":".repeat(200_000)).is_none());
    }

    #[test]
    fn accessors_and_edits() {
        let mut v = parse(r#"{"n":42,"neg":-7,"f":1.0,"huge":99999999999999999999,"b":true,"s":"x","a":[1],"n":0}"#).unwrap();
        assert_eq!(v.get("n").and_then(Value::as_i64), Some(42));
        assert_eq!(v.get("neg").and_then(Value::as_i64), Some(-7));
        assert_eq!(v.get("neg").and_then(Value::as_u64), None);
        assert_eq!(v.get("f").and_then(Value::as_i64), None);
        assert_eq!(v.get("huge").and_then(Value::as_i64), None);
        assert_eq!(v.get("huge").and_then(Value::as_u64), None);
        assert_eq!(v.get("b").and_then(Value::as_bool), Some(true));
        assert_eq!(v.get("s").and_then(Value::as_str), Some("x"));
        assert_eq!(
            v.get("a").and_then(Value::as_array).map(<[Value]>::len),
            Some(1)
        );
        assert_eq!(v.get("missing"), None);
        assert_eq!(Value::int(1).get("n"), None);

        v.set("s", Value::str("y"));
        v.set("new", Value::Null);
        *v.get_mut("b").unwrap() = Value::Bool(false);
        assert_eq!(v.remove("n"), Some(Value::int(42)));
        assert_eq!(
            v.to_compact(),
            r#"{"neg":-7,"f":1.0,"huge":99999999999999999999,"b":false,"s":"y","a":[1],"n":0,"new":null}"#
        );

        let mut not_object = Value::Array(vec![]);
        not_object.set("k", Value::Null);
        assert_eq!(not_object, Value::Array(vec![]));
        assert_eq!(not_object.remove("k"), None);
    }

    #[test]
    fn pretty_output_reads_like_a_config_file() {
        let mut v = Value::object();
        v.set(
            "hooks",
            Value::Array(vec![Value::str("sqz"), Value::object()]),
        );
        v.set("on", Value::Bool(true));
        v.set("empty", Value::Array(vec![]));
        assert_eq!(
            v.to_pretty(),
            "{\n  \"hooks\": [\n    \"sqz\",\n    {}\n  ],\n  \"on\": true,\n  \"empty\": []\n}"
        );
        assert_eq!(
            v.to_string(),
            r#"{"hooks":["sqz",{}],"on":true,"empty":[]}"#
        );
    }

    // --- agent form ---

    fn assert_decodes_to(agent: &str, original: &str) {
        assert_eq!(
            decode_agent_form(agent).unwrap(),
            vec![parse(original).unwrap()]
        );
    }

    #[test]
    fn pretty_uniform_array_becomes_a_table() {
        let text = r#"{
  "kind": "List",
  "items": [
    { "id": 1, "name": "alice", "tags": ["a", "b"] },
    { "id": 2, "name": "bob, jr.\nthe second", "tags": null },
    { "id": 3.50, "name": "carol", "tags": [] }
  ],
  "total": 3
}
"#;
        let agent = compact_for_agent(text).unwrap();
        assert_eq!(
            agent,
            "{\"kind\": \"List\",\"items\": \n\
             [table 3 rows: id,name,tags]\n\
             1,\"alice\",[\"a\",\"b\"]\n\
             2,\"bob, jr.\\nthe second\",null\n\
             3.50,\"carol\",[]\n\
             ,\"total\": 3}"
        );
        assert_decodes_to(&agent, text);
    }

    #[test]
    fn top_level_table_has_no_surrounding_newlines() {
        let text = r#"[
    {"name": "serde", "version": "1.0.200", "default": true},
    {"name": "quickcheck", "version": "1.0.3", "default": false},
    {"name": "lexopt", "version": "0.3.0", "default": true}
]"#;
        let agent = compact_for_agent(text).unwrap();
        assert_eq!(
            agent,
            "[table 3 rows: name,version,default]\n\
             \"serde\",\"1.0.200\",true\n\
             \"quickcheck\",\"1.0.3\",false\n\
             \"lexopt\",\"0.3.0\",true"
        );
        assert_decodes_to(&agent, text);
    }

    #[test]
    fn awkward_keys_are_quoted_in_the_header() {
        let text = r#"[{"a b":1,"":2,"c,d":3,"app.kubernetes.io/name":4,"é":5},
                       {"a b":1,"":2,"c,d":3,"app.kubernetes.io/name":4,"é":5},
                       {"a b":1,"":2,"c,d":3,"app.kubernetes.io/name":4,"é":5}]"#;
        let agent = compact_for_agent(text).unwrap();
        assert!(agent.starts_with(
            "[table 3 rows: \"a b\",\"\",\"c,d\",app.kubernetes.io/name,\"é\"]\n1,2,3,4,5\n"
        ));
        assert_decodes_to(&agent, text);
    }

    #[test]
    fn tables_nest_inside_objects_but_not_inside_cells() {
        let row = r#"{"pod": "web", "containers": [{"n": "a", "r": 0}, {"n": "b", "r": 1}, {"n": "c", "r": 2}]}"#;
        let nested = format!(r#"{{"one": {row}, "two": [{row}, {row}, {row}]}}"#);
        let agent = compact_for_agent(&nested).unwrap();
        let cells = r#""web",[{"n":"a","r":0},{"n":"b","r":1},{"n":"c","r":2}]"#;
        assert_eq!(
            agent,
            format!(
                "{{\"one\": {{\"pod\": \"web\",\"containers\": \n[table 3 rows: n,r]\n\"a\",0\n\"b\",1\n\"c\",2\n}},\"two\": \n\
                 [table 3 rows: pod,containers]\n{cells}\n{cells}\n{cells}\n}}"
            )
        );
        assert_decodes_to(&agent, &nested);
    }

    #[test]
    fn inner_tables_win_over_an_outer_table_that_would_hide_them() {
        let condition =
            r#"{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T12:00:05Z"}"#;
        let pod = format!(
            r#"{{"kind": "Pod", "status": {{"conditions": [{condition}, {condition}, {condition}, {condition}]}}}}"#
        );
        let text = format!("[{pod}, {pod}, {pod}]");
        let agent = compact_for_agent(&text).unwrap();
        assert_eq!(
            agent
                .matches("[table 4 rows: type,status,lastTransitionTime]")
                .count(),
            3
        );
        assert!(agent.starts_with("[{\"kind\": \"Pod\",\"status\": {\"conditions\": \n[table 4"));
        assert!(!agent.contains("[table 3 rows"));
        assert_decodes_to(&agent, &text);
    }

    #[test]
    fn adjacent_tables_in_an_array_decode() {
        let t = r#"[{"key":1},{"key":2},{"key":3}]"#;
        let text = format!("[ {t}, {t} ]");
        let agent = compact_for_agent(&text).unwrap();
        assert_eq!(
            agent,
            "[\n[table 3 rows: key]\n1\n2\n3\n,\n[table 3 rows: key]\n1\n2\n3\n]"
        );
        assert_decodes_to(&agent, &text);
    }

    #[test]
    fn short_or_mixed_arrays_stay_objects() {
        // Two rows, keys in another order, or a non-object: not uniform.
        let text = r#"{ "two": [{"id": 1}, {"id": 2}],
                        "order": [{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}],
                        "mixed": [{"a": 1}, {"a": 2}, 3],
                        "empty": [{}, {}, {}] }"#;
        assert_eq!(
            compact_for_agent(text).unwrap(),
            r#"{"two": [{"id": 1},{"id": 2}],"order": [{"a": 1,"b": 2},{"b": 2,"a": 1},{"a": 1,"b": 2}],"mixed": [{"a": 1},{"a": 2},3],"empty": [{},{},{}]}"#
        );
        // Three rows of one one-letter key: the table is only just shorter than `{"a": 1}`s.
        assert_eq!(
            compact_for_agent(r#"[{"a":1},{"a":2},{"a":3}] "#).as_deref(),
            Some("[table 3 rows: a]\n1\n2\n3")
        );
    }

    #[test]
    fn nothing_to_gain_gives_none() {
        assert_eq!(compact_for_agent(r#"{"a":[1,2,3],"b":{"c":null}}"#), None);
        assert_eq!(
            compact_for_agent("{\"a\":[1,2,3],\"b\":{\"c\":null}}\n"),
            None
        );
        assert_eq!(compact_for_agent("  42  "), None);
        assert_eq!(compact_for_agent("\"just a string\""), None);
        assert_eq!(compact_for_agent("error: could not compile `sqz`"), None);
        assert_eq!(compact_for_agent("[1, 2,\n 3,]"), None);
        assert_eq!(compact_for_agent(""), None);
    }

    #[test]
    fn minified_output_is_exactly_the_compact_json() {
        let text = "{\n    \"a\": [\n        1,\n        2\n    ],\n    \"b\": null\n}";
        assert_eq!(
            compact_for_agent(text).unwrap(),
            r#"{"a": [1,2],"b": null}"#
        );
    }

    #[test]
    fn json_lines_become_a_table() {
        let text = "{\"level\":\"info\",\"msg\":\"started\",\"port\":8080}\n\
                    {\"level\":\"warn\",\"msg\":\"slow, 2s\",\"port\":null}\r\n\
                    { \"level\": \"error\", \"msg\": \"bind failed\", \"port\": 8080 }\n";
        let agent = compact_for_agent(text).unwrap();
        assert_eq!(
            agent,
            "[jsonl 3 rows: level,msg,port]\n\
             \"info\",\"started\",8080\n\
             \"warn\",\"slow, 2s\",null\n\
             \"error\",\"bind failed\",8080"
        );
        let lines: Vec<Value> = text.lines().map(|l| parse(l).unwrap()).collect();
        assert_eq!(decode_agent_form(&agent).unwrap(), lines);
    }

    #[test]
    fn json_lines_that_differ_give_none() {
        assert_eq!(compact_for_agent("{\"a\":1}\n{\"b\":2}\n{\"a\":3}\n"), None);
        assert_eq!(compact_for_agent("{\"abc\":1}\n{\"abc\":2}\n"), None);
        assert_eq!(
            compact_for_agent("{\"abc\":1}\n\n{\"abc\":2}\n{\"abc\":3}"),
            None
        );
        assert_eq!(compact_for_agent("[1]\n[2]\n[3]"), None);
    }

    #[test]
    fn decoder_rejects_malformed_tables() {
        let bad = [
            "[table 3 rows: a]\n1\n2",
            "[table 2 rows: a]\n1\n2\n3",
            "[table 1 rows: a,b]\n1",
            "[table 1 rows: a]\n1,2",
            "[table rows: a]\n1",
            "[table 1 rows: ]\n1",
            "[table 1 rows: a\n1",
            "[table 99999999999999999999999 rows: a]\n1",
            "{\"x\":\n[table 1 rows: a]\n1,\"y\":2}",
            "[jsonl 1 rows: a]\n1\n2",
            "[jsonl 1 rows: a]\n[table 1 rows: b]\n1",
            "[table 1 rows: a]\n\n[table 1 rows: b]\n1\n",
        ];
        for text in bad {
            assert!(decode_agent_form(text).is_err(), "accepted {text:?}");
        }
        assert_eq!(
            decode_agent_form("[table 2 rows: a]\n1\n{}\n").unwrap(),
            vec![parse(r#"[{"a":1},{"a":{}}]"#).unwrap()]
        );
    }

    // --- properties ---

    /// A JSON value biased towards what the agent form treats specially.
    #[derive(Clone, Debug)]
    struct Doc(Value);

    const TRICKY_STRINGS: &[&str] = &[
        "",
        ",",
        "\n",
        "a,b\nc",
        "[table 3 rows: a]",
        "\n[table 1 rows: a]\n1\n",
        "\"",
        "\\",
        "\u{0}\u{1f}\u{7f}",
        "😀",
        "\u{2028}",
        "é",
        "rows: ]",
    ];

    fn gen_string(g: &mut Gen) -> String {
        if bool::arbitrary(g) {
            String::arbitrary(g)
        } else {
            g.choose(TRICKY_STRINGS).unwrap().to_string()
        }
    }

    fn gen_key(g: &mut Gen) -> String {
        const KEYS: &[&str] = &[
            "id",
            "name",
            "status",
            "app.kubernetes.io/name",
            "$ref",
            "a b",
        ];
        if u8::arbitrary(g) % 4 == 0 {
            gen_string(g)
        } else {
            g.choose(KEYS).unwrap().to_string()
        }
    }

    fn gen_number(g: &mut Gen) -> String {
        let mut n = String::new();
        if bool::arbitrary(g) {
            n.push('-');
        }
        match u8::arbitrary(g) % 3 {
            0 => n.push('0'),
            1 => n.push_str(&u64::arbitrary(g).to_string()),
            _ => n.push_str("12345678901234567890123"),
        }
        if bool::arbitrary(g) {
            n.push('.');
            n.push_str(&u16::arbitrary(g).to_string());
        }
        if u8::arbitrary(g) % 3 == 0 {
            n.push_str(g.choose(&["e", "E", "e+", "E-"]).unwrap());
            n.push_str(&u8::arbitrary(g).to_string());
        }
        n
    }

    fn gen_value(g: &mut Gen, depth: usize) -> Value {
        let kinds = if depth == 0 { 4 } else { 7 };
        match u8::arbitrary(g) % kinds {
            0 => Value::Null,
            1 => Value::Bool(bool::arbitrary(g)),
            2 => Value::Number(gen_number(g)),
            3 => Value::String(gen_string(g)),
            4 => Value::Array(
                (0..usize::arbitrary(g) % 5)
                    .map(|_| gen_value(g, depth - 1))
                    .collect(),
            ),
            5 => Value::Object(
                (0..usize::arbitrary(g) % 5)
                    .map(|_| (gen_key(g), gen_value(g, depth - 1)))
                    .collect(),
            ),
            _ => gen_uniform_array(g, depth - 1),
        }
    }

    fn gen_rows(g: &mut Gen, depth: usize, min_rows: usize) -> Vec<Value> {
        let keys: Vec<String> = (0..1 + usize::arbitrary(g) % 4)
            .map(|_| gen_key(g))
            .collect();
        let rows = min_rows + usize::arbitrary(g) % 5;
        (0..rows)
            .map(|_| {
                Value::Object(
                    keys.iter()
                        .map(|k| (k.clone(), gen_value(g, depth)))
                        .collect(),
                )
            })
            .collect()
    }

    fn gen_uniform_array(g: &mut Gen, depth: usize) -> Value {
        Value::Array(gen_rows(g, depth, 2))
    }

    impl Arbitrary for Doc {
        fn arbitrary(g: &mut Gen) -> Doc {
            Doc(gen_value(g, 4))
        }

        fn shrink(&self) -> Box<dyn Iterator<Item = Doc>> {
            let children: Vec<Doc> = match &self.0 {
                Value::Array(items) => items.iter().cloned().map(Doc).collect(),
                Value::Object(members) => members.iter().map(|(_, v)| Doc(v.clone())).collect(),
                _ => Vec::new(),
            };
            Box::new(children.into_iter())
        }
    }

    fn check<P: quickcheck::Testable>(prop: P) {
        QuickCheck::new().tests(2000).quickcheck(prop);
    }

    #[test]
    fn prop_compact_and_pretty_parse_back() {
        fn prop(doc: Doc) -> bool {
            parse(&doc.0.to_compact()).as_ref() == Ok(&doc.0)
                && parse(&doc.0.to_pretty()).as_ref() == Ok(&doc.0)
        }
        check(prop as fn(Doc) -> bool);
    }

    #[test]
    fn prop_agent_form_decodes_to_the_original() {
        fn prop(doc: Doc) -> bool {
            let doc = match doc.0 {
                v @ (Value::Array(_) | Value::Object(_)) => v,
                v => Value::Array(vec![v]),
            };
            [doc.to_pretty(), doc.to_compact()]
                .iter()
                .all(|text| match compact_for_agent(text) {
                    Some(agent) => {
                        agent.len() < text.len()
                            && decode_agent_form(&agent) == Ok(vec![doc.clone()])
                    }
                    None => true,
                })
        }
        check(prop as fn(Doc) -> bool);
    }

    /// The proxy and the MCP servers compact JSON on spawned threads, whose stacks are 2 MB:
    /// the deepest document the parser takes fits, both passes included, even in a debug
    /// build (a release build needs less than half of it).
    #[test]
    fn the_deepest_document_compacts_on_a_spawned_thread_s_stack() {
        let depth = MAX_DEPTH - 1;
        let arrays = format!("{}[1,2,3]{}", "[".repeat(depth), "]".repeat(depth));
        let objects = format!(
            "{}{{\"k\":1}}{}",
            "{\"a\":[".repeat(depth / 2),
            "]}".repeat(depth / 2)
        );
        let rows = format!("[{}]", [objects.as_str(); 3].join(","));
        let compacted = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                [arrays, objects, rows]
                    .iter()
                    .map(|doc| {
                        let pretty = parse(doc).map(|v| v.to_pretty());
                        let compacted = pretty.as_deref().ok().and_then(compact_for_agent);
                        (pretty.is_ok(), compacted.is_some())
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert_eq!(compacted, [(true, true); 3]);
    }

    #[test]
    fn prop_planned_sizes_are_exact() {
        fn prop(doc: Doc) -> bool {
            [doc.0.to_compact(), doc.0.to_pretty()].iter().all(|text| {
                let mut tables = Vec::new();
                let sized = Parser::new(text, false)
                    .plan_document(&mut tables)
                    .expect("plans");
                let mut agent = String::new();
                Parser::new(text, false)
                    .write_value(&mut agent, Some(&mut tables.into_iter().peekable()))
                    .expect("writes");
                sized.compact == doc.0.to_compact().len() && sized.agent == agent.len()
            })
        }
        check(prop as fn(Doc) -> bool);
    }

    #[test]
    fn prop_pretty_uniform_rows_always_compact_and_decode() {
        fn prop(seed: u64) -> bool {
            let mut g = Gen::from_size_and_seed(20, seed);
            let doc = Value::Array(gen_rows(&mut g, 2, 3));
            match compact_for_agent(&doc.to_pretty()) {
                Some(agent) => decode_agent_form(&agent) == Ok(vec![doc]),
                None => false,
            }
        }
        check(prop as fn(u64) -> bool);
    }

    #[test]
    fn prop_json_lines_decode_to_the_lines() {
        fn prop(seed: u64, trailing_newline: bool) -> bool {
            let mut g = Gen::from_size_and_seed(20, seed);
            let lines = gen_rows(&mut g, 2, 3);
            let mut text = lines
                .iter()
                .map(Value::to_compact)
                .collect::<Vec<_>>()
                .join("\n");
            if trailing_newline {
                text.push('\n');
            }
            match compact_for_agent(&text) {
                Some(agent) => {
                    agent.starts_with("[jsonl ") && decode_agent_form(&agent) == Ok(lines)
                }
                None => true,
            }
        }
        check(prop as fn(u64, bool) -> bool);
    }

    #[test]
    fn prop_arbitrary_text_never_panics() {
        fn prop(text: String, doc: Doc, cut: usize) -> bool {
            let _ = parse(&text);
            let _ = compact_for_agent(&text);
            let _ = decode_agent_form(&text);
            // Truncated and spliced agent forms must fail cleanly too.
            if let Some(agent) = compact_for_agent(&doc.0.to_pretty()) {
                let mut at = cut % (agent.len() + 1);
                while !agent.is_char_boundary(at) {
                    at -= 1;
                }
                let _ = decode_agent_form(&agent[..at]);
                let _ = decode_agent_form(&format!("{}{text}{}", &agent[..at], &agent[at..]));
            }
            true
        }
        check(prop as fn(String, Doc, usize) -> bool);
    }
}
