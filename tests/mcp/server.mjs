// `sqz mcp` driven by the official MCP SDK client: handshake, tool list, reads that come back
// as refs, slice refs and deltas, expand round trips, recall, grep and list on a real project
// tree, and the workspace roots. Run by tests/mcp.rs with the paths in the environment.
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { connect, call, text, hash16, applyDelta, assert } from "./lib.mjs";

const { SQZ_BIN, SCRATCH, PROJECT, OUTSIDE, FIXTURE, FIXTURE_CMD } = process.env;
const { client } = await connect(SQZ_BIN, ["mcp"], { cwd: SCRATCH, roots: [PROJECT] });

// initialize: server info, tools capability, a negotiated dated version.
assert.equal(client.getServerVersion().name, "sqz");
assert.ok(client.getServerCapabilities().tools, "tools capability");
assert.match(client.getInstructions(), /§ref:HASH§/);

// tools/list: every tool, every schema an object.
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, ["compress", "expand", "passthrough", "sqz_grep", "sqz_list_dir", "sqz_read_file", "sqz_recall"]);
for (const t of tools) assert.equal(t.inputSchema.type, "object", t.name);

const split = (out) => {
  const nl = out.indexOf("\n");
  return [out.slice(0, nl), out.slice(nl + 1)];
};

// A full read is the file, byte for byte, under a one-line header.
const file = `${SCRATCH}/lib.rs`;
const original = readFileSync(file, "utf8");
let [header, body] = split(text(await call(client, "sqz_read_file", { path: "lib.rs" })));
assert.match(header, /^\[sqz_read_file path=lib\.rs size=\d+ lines=1-\d+ of \d+\]$/);
assert.equal(body, original);
const hash = hash16(original);

// The same read again: a reference to what the conversation already holds.
[header, body] = split(text(await call(client, "sqz_read_file", { path: "lib.rs" })));
assert.match(header, /unchanged/);
assert.equal(body, `§ref:${hash}§\n`);

// A ranged read inside that full read: a slice reference.
[header, body] = split(text(await call(client, "sqz_read_file", { path: "lib.rs", offset: 41, limit: 40 })));
assert.match(header, /lines=41-80 of/);
assert.equal(body, `§ref:${hash}:L41-80§\n`);

// expand gives back the bytes behind each form.
assert.equal(text(await call(client, "expand", { ref: `§ref:${hash}§` })), original);
const lines = original.match(/[^\n]*\n/g);
assert.equal(text(await call(client, "expand", { ref: `${hash}:L41-80` })), lines.slice(40, 80).join(""));

// A small edit, then a re-read: a delta against the earlier read that applies exactly.
const edited = original.replace(lines[99], "    // edited by the test\n" + lines[99]).replace(lines[9], "");
writeFileSync(file, edited);
[header, body] = split(text(await call(client, "sqz_read_file", { path: "lib.rs" })));
assert.match(header, /changed since an earlier read/);
assert.ok(body.startsWith(`§delta:${hash}§\n`), body.slice(0, 80));
assert.equal(applyDelta(original, body), edited);
assert.ok(body.length < edited.length / 4, "a delta is much shorter than the file");
// The new text is stored too: expand by its hash.
assert.equal(text(await call(client, "expand", { ref: hash16(edited) })), edited);

// A file first read through the shell hook (`cat`), then edited and read through MCP: the
// shell's read is found by its SimHash and the MCP read is a delta against it.
const notes = readFileSync(`${SCRATCH}/lib.rs`, "utf8").replaceAll("Hash", "Digest");
writeFileSync(`${SCRATCH}/notes.rs`, notes);
execFileSync(SQZ_BIN, ["compress", "--cmd", "cat notes.rs"], { input: notes, cwd: SCRATCH, stdio: ["pipe", "ignore", "ignore"] });
const notesEdited = notes.replace("fn ", "pub fn ");
writeFileSync(`${SCRATCH}/notes.rs`, notesEdited);
[header, body] = split(text(await call(client, "sqz_read_file", { path: "notes.rs" })));
assert.ok(body.startsWith(`§delta:${hash16(notes)}§\n`), body.slice(0, 80));
assert.equal(applyDelta(notes, body), notesEdited);

// A ranged read of the edited file is never a delta; tiny files always come whole.
[, body] = split(text(await call(client, "sqz_read_file", { path: "lib.rs", offset: 1, limit: 3 })));
assert.equal(body, edited.match(/[^\n]*\n/g).slice(0, 3).join(""));
writeFileSync(`${SCRATCH}/tiny.txt`, "ok\n");
for (let i = 0; i < 2; i++) {
  [, body] = split(text(await call(client, "sqz_read_file", { path: "tiny.txt" })));
  assert.equal(body, "ok\n");
}

// Colour codes are stripped for the agent; the stored original keeps them.
const coloured = readFileSync(`${SCRATCH}/colour.log`);
[, body] = split(text(await call(client, "sqz_read_file", { path: "colour.log" })));
assert.ok(!body.includes("\x1b"), "no escape codes shown");
assert.equal(body, coloured.toString("utf8").replace(/\x1b\[[0-9;]*[mK]/g, ""));
assert.equal(text(await call(client, "expand", { ref: hash16(coloured) })), coloured.toString("utf8"));

// compress a real command output, then recall finds it and expand returns it.
const log = readFileSync(FIXTURE, "utf8");
const compressed = text(await call(client, "compress", { text: log, label: FIXTURE_CMD }));
assert.ok(compressed.length < log.length, "compress saved something");
const recalled = text(await call(client, "sqz_recall", { query: "test result FAILED panicked" }));
const logHash = hash16(log);
assert.ok(recalled.includes(`§ref:${logHash}§`), recalled);
assert.equal(text(await call(client, "expand", { ref: logHash.slice(0, 10) })), log);
assert.equal(text(await call(client, "passthrough", { text: "as is" })), "as is");

// grep over the real project tree (a client root): path:line:text, ignored trees counted.
const wanted = "pub fn serve_" + "stdio(";
const grep = text(await call(client, "sqz_grep", { pattern: wanted, path: PROJECT }));
assert.match(grep, /^\[sqz_grep pattern="pub fn serve_stdio\(" .*matches=1 files=1 · skipped: [^\n]*target \(1 dir\)/);
assert.match(grep, /\nsrc\/mcp\/server\.rs:\d+:pub fn serve_stdio|\n\/.*\/src\/mcp\/server\.rs:\d+:pub fn serve_stdio/);
const regex = text(await call(client, "sqz_grep", { pattern: "^pub (fn|struct) (parse|Workspace)\\b", regex: true, path: `${PROJECT}/src/mcp` }));
assert.match(regex, /workspace\.rs:\d+:pub struct Workspace/);
assert.match(regex, /rpc\.rs:\d+:pub fn parse\(/);
const capped = text(await call(client, "sqz_grep", { pattern: "fn ", path: `${PROJECT}/src`, max_matches: 5 }));
assert.match(capped, /\n\[… \d+ more matches in \d+ files not shown \(max_matches=5\)/);
const bad = await call(client, "sqz_grep", { pattern: "(unclosed", regex: true });
assert.equal(bad.isError, true);

// list_dir over the same tree.
const listing = text(await call(client, "sqz_list_dir", { path: PROJECT, depth: 2 }));
assert.match(listing, /^\[sqz_list_dir path=\S+ depth=2 entries=\d+ · skipped: [^\n]*target \(1 dir\)/);
assert.match(listing, /\nsrc\/\n(  .*\n)*  main\.rs\n/);
assert.ok(!/\ntarget\//.test(listing), "target is skipped");

// Roots: outside paths and links that lead outside are refused with a tool error.
for (const path of [OUTSIDE, "escape-link"]) {
  const refused = await call(client, "sqz_read_file", { path });
  assert.equal(refused.isError, true, path);
  assert.match(text(refused), /outside the workspace roots/);
}
const refusedGrep = await call(client, "sqz_grep", { pattern: "x", path: "/" });
assert.equal(refusedGrep.isError, true);

// An unknown tool is a protocol error (-32602), not a tool result.
await assert.rejects(call(client, "no_such_tool", {}), /-32602|Unknown tool|unknown tool/);

await client.close();
console.log("server scenario: ok");
