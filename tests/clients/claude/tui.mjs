// Runs the real Claude Code client's interactive TUI in tmux through tui-script.json against the
// scripted model on loopback, as a user would: one prompt typed in, every dialog the client shows
// answered, until the model's final text is on the screen. Writes OUT/report.json: each dialog
// seen (what kind, at which step, its text), the MCP tools offered to the model, and per tool
// call what the model saw.
//
//   node tui.mjs --out DIR --variant baseline|sqz --rules user|none --sqz PATH
//                [--claude PATH] [--timeout SECONDS]
//
// baseline: no sqz set up. sqz: `sqz init` in the project first.
// rules user: the user's own settings allow python3, `sed -i` and edits (as in run.mjs).
// rules none: the user has no allow rule, and answers each permission prompt with "Yes, and
// don't ask again", the answer that should make the client stop asking.
// Either way the user has finished the client's first-run screens, trusted the project folder
// once, and works in the `default` ("manual") permission mode. Every path is under DIR; the
// tmux server has its socket there and is killed on every way out.

import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFakeModel, readJsonLines, scriptedCalls } from "../lib/harness.mjs";
import { makeProject } from "../lib/project.mjs";
import { scratch, sqzInit, scriptSteps } from "./scratch.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

const API_KEY = "sk-ant-scripted-model-0000";
const PROMPT = "Work through the scripted steps.";

// What marks each kind of dialog on the screen (client 2.1.328, seen in tmux).
const DIALOGS = [
  ["permission", /Do you want to (proceed|make this edit|create|allow)/],
  ["mcp-server", /New MCP server found/],
  ["trust", /Quick safety check|Yes, I trust this folder/],
  ["api-key", /Detected a custom API key/],
  ["auto-mode", /Auto mode can't check actions/],
  ["auto-mode-offer", /Make auto mode your default permission mode/],
];
// A dialog no marker above names still counts: below the client's last full-width rule it has a
// footer "… Esc to cancel" or a selected choice "❯ …" (the idle screen has only its status line
// there).
const DIALOG_FOOTER = /Esc to cancel/;
const SELECTED = /^\s*❯ \S/m;
// The idle footer, once the input box is ready; and the mode it must name.
const READY = /\? for shortcuts/;
const MANUAL = /manual mode on/;

function options(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const key of ["out", "variant", "rules", "sqz"])
    if (!out[key]) throw new Error(`tui.mjs: --${key} is required`);
  if (!["baseline", "sqz"].includes(out.variant))
    throw new Error(`tui.mjs: --variant must be baseline or sqz, not ${out.variant}`);
  if (!["user", "none"].includes(out.rules))
    throw new Error(`tui.mjs: --rules must be user or none, not ${out.rules}`);
  out.sqz = path.resolve(out.sqz);
  out.claude ??= path.join(here, "node_modules", ".bin", "claude");
  out.script ??= path.join(here, "tui-script.json");
  out.timeout = Number(out.timeout ?? 90);
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// Waits `ms` without returning to the event loop, for the exit path.
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function shellQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/// One tmux server of our own, on a socket under the run's directory.
class Tmux {
  constructor(socket) {
    this.socket = socket;
    this.killed = false;
    this.pid = null;
  }

  cmd(...args) {
    const r = spawnSync("tmux", ["-S", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    if (r.error && r.error.code === "ENOENT") throw new Error("tmux is not installed (not on PATH)");
    return r;
  }

  start(command) {
    const r = this.cmd("new-session", "-d", "-s", "tui", "-x", "200", "-y", "50", command);
    if (r.status !== 0) throw new Error(`tmux new-session failed: ${r.stderr}`);
    // The pane runs the launcher, which execs the client: this is the client's process.
    const pid = this.cmd("display-message", "-p", "-t", "tui", "#{pane_pid}");
    this.pid = Number(pid.stdout.trim()) || null;
  }

  /// The visible screen, or null once the session is gone (the client exited).
  screen() {
    const r = this.cmd("capture-pane", "-p", "-t", "tui");
    return r.status === 0 ? r.stdout : null;
  }

  keys(...keys) {
    this.cmd("send-keys", "-t", "tui", ...keys);
  }

  text(text) {
    this.cmd("send-keys", "-t", "tui", "-l", text);
  }

  /// Ends the server, which hangs up on the client, and waits up to 10 s for the client to
  /// finish writing its files and exit; then kills it.
  kill() {
    if (this.killed) return "already ended";
    this.killed = true;
    this.cmd("kill-server");
    if (this.pid === null) return "the client's process was not known";
    let waited = 0;
    for (; waited < 10000 && alive(this.pid); waited += 100) sleepSync(100);
    if (!alive(this.pid)) return `the client exited ${waited} ms after the hang-up`;
    process.kill(this.pid, "SIGKILL");
    return "the client was killed 10 s after the hang-up";
  }
}

/// The dialog on `screen`, if one is open: its kind and its lines (those below the last
/// full-width rule, where the client draws dialogs), blank lines dropped.
function dialogOn(screen) {
  if (!screen) return null;
  const lines = screen.split("\n");
  let start = 0;
  lines.forEach((l, i) => {
    if (/^─{20,}/.test(l)) start = i + 1;
  });
  const block = lines
    .slice(start)
    .map((l) => l.trimEnd().replace(/╌{3,}/g, "╌╌╌"))
    .filter((l) => l.trim() !== "");
  const text = block.join("\n");
  if (!DIALOG_FOOTER.test(text) && !SELECTED.test(text)) return null;
  const kind = DIALOGS.find(([, re]) => re.test(text))?.[0] ?? "other";
  return { kind, lines: block, text };
}

/// The keys that answer a dialog as this user would: a permission prompt with "Yes, and don't
/// ask again" when `dontAskAgain` and the prompt offers it, else "Yes"; any other dialog with
/// its preselected answer (Enter).
function answerKeys(dialog, dontAskAgain) {
  if (dialog.kind !== "permission") return ["Enter"];
  const choices = [];
  for (const line of dialog.lines) {
    const m = /^\s*(❯)?\s*(\d+)\.\s+(.*)$/.exec(line);
    if (m) choices.push({ selected: m[1] !== undefined, label: m[3] });
  }
  const current = Math.max(0, choices.findIndex((c) => c.selected));
  let target = choices.findIndex((c) => /^Yes$/.test(c.label));
  const always = choices.findIndex((c) => /^Yes, and don.t ask again/.test(c.label));
  if (dontAskAgain && always >= 0) target = always;
  if (target < 0) return ["Enter"];
  const moves = target > current ? Array(target - current).fill("Down") : Array(current - target).fill("Up");
  return [...moves, "Enter"];
}

function mainRequests(log) {
  return readJsonLines(log).filter((r) => r.main).length;
}

async function main() {
  const o = options(process.argv.slice(2));
  const out = path.resolve(o.out);
  const scratchDir = scratch({ out, sqz: o.sqz, claude: o.claude });
  const { home, project, env } = scratchDir;

  // The user works in the `default` mode: with no setting, this TUI starts in auto mode, whose
  // check runs on Anthropic's servers and cannot run against a scripted model.
  const permissions = { defaultMode: "default" };
  if (o.rules === "user") permissions.allow = ["Bash(python3:*)", "Bash(sed -i:*)", "Edit"];
  fs.writeFileSync(path.join(home, ".claude", "settings.json"), JSON.stringify({ permissions }, null, 2));
  // First-run screens done and the API key accepted (the client keeps its last 20 characters),
  // and the folder trusted: the entry the client writes when the trust dialog is answered yes.
  const state = {
    hasCompletedOnboarding: true,
    // Set when the user has answered "Make auto mode your default permission mode?" once.
    hasSeenAutoDefaultNudge: true,
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects: {
      [project]: {
        allowedTools: [],
        mcpContextUris: [],
        mcpServers: {},
        enabledMcpjsonServers: [],
        disabledMcpjsonServers: [],
        hasTrustDialogAccepted: true,
        hasClaudeMdExternalIncludesApproved: false,
        hasClaudeMdExternalIncludesWarningShown: false,
      },
    },
  };
  fs.writeFileSync(path.join(home, ".claude.json"), JSON.stringify(state, null, 2));
  makeProject(project, { home, canary: "not-a-secret-in-this-run" });

  const init = o.variant === "sqz" ? sqzInit(o.sqz, scratchDir, env) : null;

  const { steps, file: stepsFile } = scriptSteps(o.script, scratchDir);
  const finalText = steps.find((s) => s.text)?.text;
  if (!finalText) throw new Error(`${o.script} has no final text step`);
  const log = path.join(out, "requests.jsonl");
  const model = await startFakeModel({ script: stepsFile, log });

  const claudeEnv = {
    ...env,
    TERM: "xterm-256color",
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${model.port}`,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // Without it the TUI tries to fetch its plugin marketplace from the network at start-up.
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  const args = ["--debug-file", path.join(out, "debug.log"), "--tools", "Bash,Read,Edit,Write,Grep,Glob"];
  const launcher = path.join(out, "launch.sh");
  fs.writeFileSync(
    launcher,
    [
      "#!/bin/sh",
      `cd ${shellQuote(project)} || exit 1`,
      `exec env -i ${Object.entries(claudeEnv).map(([k, v]) => `${k}=${shellQuote(v)}`).join(" ")} \\`,
      `  ${shellQuote(o.claude)} ${args.map(shellQuote).join(" ")}`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );

  const tmux = new Tmux(path.join(out, "tmux.sock"));
  process.on("exit", () => tmux.kill());
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.on(signal, () => {
      tmux.kill();
      process.exit(1);
    });

  const dialogs = [];
  const events = [];
  let last = "";
  let manual = null;
  let finished = false;
  let exited = false;
  const started = Date.now();
  try {
    tmux.start(shellQuote(launcher));
    // Answers the dialog on the screen, if any, once it has stood still for half a second (a
    // dialog drawn at start-up can miss keys sent at once), and waits until it has gone or
    // changed, answering again from the screen as it is now if the keys were lost. Returns
    // "none", "answered", or "stuck" (recorded in events).
    const handleDialog = async (screen) => {
      let dialog = dialogOn(screen);
      if (!dialog) return "none";
      await sleep(500);
      const again = dialogOn(tmux.screen());
      if (!again || again.text !== dialog.text) return "answered";
      const step = mainRequests(log) - 1;
      const keys = answerKeys(dialog, o.rules === "none");
      dialogs.push({ kind: dialog.kind, step, title: dialog.lines[0] ?? "", lines: dialog.lines, keys });
      events.push(`dialog ${dialog.kind} at step ${step}, answered ${keys.join(" ")}`);
      for (let attempt = 0; attempt < 3; attempt++) {
        for (const k of answerKeys(dialog, o.rules === "none")) {
          tmux.keys(k);
          await sleep(150);
        }
        const deadline = Date.now() + 5000;
        while (Date.now() < deadline) {
          await sleep(200);
          const now = tmux.screen();
          if (now === null) return "answered";
          const next = dialogOn(now);
          if (!next || mainRequests(log) - 1 !== step) return "answered";
          if (next.kind !== dialog.kind || next.lines[0] !== dialog.lines[0]) return "answered";
          dialog = next;
        }
        events.push(`the ${dialog.kind} dialog was still open 5 s after the answer`);
      }
      return "stuck";
    };
    const poll = async (until, seconds, what) => {
      const deadline = Date.now() + seconds * 1000;
      while (Date.now() < deadline) {
        const screen = tmux.screen();
        if (screen === null) {
          exited = true;
          events.push(`the client exited while ${what}`);
          return false;
        }
        last = screen;
        const handled = await handleDialog(screen);
        if (handled === "stuck") return false;
        if (handled === "answered") continue;
        if (until(screen)) return true;
        await sleep(250);
      }
      events.push(`timed out after ${seconds} s while ${what}`);
      return false;
    };

    if (await poll((s) => READY.test(s), 60, "waiting for the input box")) {
      manual = MANUAL.test(last);
      tmux.text(PROMPT);
      if (await poll((s) => s.includes(PROMPT), 10, "typing the prompt")) {
        tmux.keys("Enter");
        events.push("prompt submitted");
        finished = await poll(
          (s) => s.includes(finalText) && mainRequests(log) >= steps.length,
          o.timeout,
          "waiting for the final text",
        );
      }
    }
  } finally {
    events.push(tmux.kill());
    await model.stop();
  }
  const seconds = (Date.now() - started) / 1000;

  const requests = readJsonLines(log);
  const calls = scriptedCalls(steps, requests);
  // The MCP tools the client offered the model: a project server it did not approve offers none.
  const firstMain = requests.find((r) => r.main);
  const mcpTools = (firstMain?.body?.tools ?? []).map((t) => t.name).filter((n) => n?.startsWith("mcp__"));
  const localSettings = path.join(project, ".claude", "settings.local.json");

  const report = {
    client: "claude-code-tui",
    variant: o.variant,
    rules: o.rules,
    out,
    init,
    manual_mode: manual,
    finished,
    exited,
    seconds,
    events,
    dialogs,
    last_screen: last,
    main_requests: requests.filter((r) => r.main).length,
    mcp_tools: mcpTools,
    calls,
    settings_local: fs.existsSync(localSettings) ? fs.readFileSync(localSettings, "utf8") : null,
  };
  fs.writeFileSync(path.join(out, "report.json"), JSON.stringify(report, null, 2));
  process.stdout.write(`report ${path.join(out, "report.json")}\n`);
}

main().catch((e) => {
  process.stderr.write(`tui.mjs: ${e.stack ?? e}\n`);
  process.exit(1);
});
