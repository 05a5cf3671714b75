// Shared by the real-client runners: starting the scripted model (and sqz proxy) on loopback,
// running a program with a deadline, and reading back what the model was sent.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

// Every server started here is killed when this process exits, however it exits.
const servers = new Set();
process.on("exit", () => {
  for (const child of servers) child.kill("SIGKILL");
});

// Starts `cmd args` and resolves once a line of its output matches `pattern` (its first
// capture is the port). Rejects with the output seen if it exits or takes over `ms`.
function startListening(cmd, args, { env, stream, pattern, ms = 15000, label }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    servers.add(child);
    child.on("exit", () => servers.delete(child));
    let seen = "";
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start listening within ${ms} ms:\n${seen}`));
    }, ms);
    const watch = (chunk) => {
      seen += chunk.toString("utf8");
      const m = pattern.exec(seen);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ port: Number(m[1]), child, output: () => seen });
      }
    };
    child[stream].on("data", watch);
    child[stream === "stdout" ? "stderr" : "stdout"].on("data", (c) => {
      seen += c.toString("utf8");
    });
    child.on("exit", (code, signal) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) before listening:\n${seen}`));
    });
  });
}

function stopper(child) {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
}

/// The scripted Anthropic Messages model (fake-model.mjs) on 127.0.0.1.
export async function startFakeModel({ script, log }) {
  const s = await startListening(
    process.execPath,
    [path.join(here, "fake-model.mjs"), "--script", script, "--log", log],
    { env: process.env, stream: "stdout", pattern: /listening (\d+)/, label: "fake model" },
  );
  return { port: s.port, stop: stopper(s.child) };
}

/// `sqz proxy --port 0 --upstream URL`, which names its port on stderr.
export async function startSqzProxy({ sqz, upstream, env }) {
  const s = await startListening(sqz, ["proxy", "--port", "0", "--upstream", upstream], {
    env,
    stream: "stderr",
    pattern: /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    label: "sqz proxy",
  });
  return { port: s.port, stop: stopper(s.child), output: s.output };
}

/// Runs a program to completion (or `timeoutMs`), returning its status and output.
export function run(cmd, args, { cwd, env, input, timeoutMs = 60000 } = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    env,
    input,
    timeout: timeoutMs,
    maxBuffer: 256 * 1024 * 1024,
    encoding: "utf8",
  });
  if (r.error && r.error.code === "ENOENT") throw new Error(`${cmd} is not installed (not on PATH)`);
  return {
    status: r.status,
    signal: r.signal,
    timedOut: r.error?.code === "ETIMEDOUT",
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
  };
}

/// A copy of `value` with `token` replaced by `by` in every string it holds, at any depth.
export function replaceInStrings(value, token, by) {
  if (typeof value === "string") return value.split(token).join(by);
  if (Array.isArray(value)) return value.map((v) => replaceInStrings(v, token, by));
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, replaceInStrings(v, token, by)]),
    );
  return value;
}

/// Like `run`, without blocking: the servers this process started keep their pipes drained.
export function runAsync(cmd, args, { cwd, env, timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e.code === "ENOENT" ? new Error(`${cmd} is not installed (not on PATH)`) : e);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({
        status,
        signal,
        timedOut,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

/// The JSON lines of a file, each parsed.
export function readJsonLines(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/// A tool result's content as the text the model reads: a string as is, text blocks joined.
export function resultText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((b) => (b.type === "text" ? b.text : `[${b.type} block]`))
    .join("\n");
}

/// Every tool result the model was sent, keyed by tool_use_id, as it first appeared: the text,
/// the error flag, and the number of the request that first carried it.
export function firstToolResults(requests) {
  const seen = new Map();
  for (const r of requests) {
    if (!r.main) continue;
    for (const m of r.body.messages ?? []) {
      if (m.role !== "user" || !Array.isArray(m.content)) continue;
      for (const b of m.content) {
        if (b.type !== "tool_result" || seen.has(b.tool_use_id)) continue;
        seen.set(b.tool_use_id, {
          text: resultText(b.content),
          is_error: b.is_error === true,
          request: r.n,
        });
      }
    }
  }
  return seen;
}

/// Each tool call of a script (steps as fake-model.mjs reads them), as the model sent it and
/// saw its result: {step, id, tool, input (as sent, with {match} filled in), expand (the
/// step's flag), answered, text, is_error}. The fake model names step K's call `toolu_000K`.
export function scriptedCalls(steps, requests) {
  const results = firstToolResults(requests);
  const sent = new Map();
  for (const r of requests)
    for (const m of r.body?.messages ?? [])
      if (m.role === "assistant" && Array.isArray(m.content))
        for (const b of m.content) if (b.type === "tool_use") sent.set(b.id, b.input);
  const calls = [];
  steps.forEach((step, k) => {
    if (!step.tool) return;
    const id = `toolu_${String(k).padStart(4, "0")}`;
    const seen = results.get(id) ?? null;
    calls.push({
      step: k,
      id,
      tool: step.tool,
      input: sent.get(id) ?? null,
      expand: step.expand === true,
      answered: seen !== null,
      text: seen?.text ?? "",
      is_error: seen?.is_error ?? false,
    });
  });
  return calls;
}

/// A copy of `value` without any `cache_control` member, at any depth.
export function withoutCacheControl(value) {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (k !== "cache_control") out[k] = withoutCacheControl(v);
    return out;
  }
  return value;
}

/// For each main request after the first: which of the previous request's messages it sent
/// differently (`cache_control` set aside), and a short view of the first such difference.
export function historyChanges(requests) {
  const main = requests.filter((r) => r.main);
  const out = [];
  for (let k = 1; k < main.length; k++) {
    const prev = (main[k - 1].body.messages ?? []).map((m) => JSON.stringify(withoutCacheControl(m)));
    const next = (main[k].body.messages ?? []).map((m) => JSON.stringify(withoutCacheControl(m)));
    const changed = [];
    let example = null;
    for (let i = 0; i < prev.length; i++) {
      if (next[i] === prev[i]) continue;
      changed.push(i);
      if (!example) {
        let d = 0;
        const a = prev[i];
        const b = next[i] ?? "";
        while (d < a.length && a[d] === b[d]) d++;
        example = {
          message: i,
          before: a.slice(Math.max(0, d - 60), d + 140),
          after: b.slice(Math.max(0, d - 60), d + 140),
        };
      }
    }
    out.push({
      request: k,
      prev_len: prev.length,
      next_len: next.length,
      changed,
      example,
    });
  }
  return out;
}
